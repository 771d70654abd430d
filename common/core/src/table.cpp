// key_averages().table() the way torch 2.11 computes it. The Python this mirrors:
//   torch/autograd/profiler.py       _parse_kineto_results  (which events, GPU attribution)
//   torch/autograd/profiler_util.py  EventList._populate_cpu_children, _remove_dup_nodes,
//                                    FunctionEvent, FunctionEventAvg, key_averages, _build_table
// Times are kept twice: in integer nanoseconds (what the lessons read) and in float microseconds
// computed exactly as Python computes them (relative to the trace's start, durations as
// end - start, sums in Python's order), which the text prints: so an average that sits on a
// rounding boundary (8.6635us) rounds the way Python's does.
#include "workbook/table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "workbook/rules.hpp"

namespace wb {
namespace {

// Where an event lands in Python's event list; Python decides CPU vs device from the activity
// type (deviceTypeFromActivity in torch/csrc/profiler/kineto_shim.cpp).
enum class Side { Skip, Cpu, Device };

Side side_of(const Event& e) {
  switch (e.kind) {
    case Kind::CpuOp:
    case Kind::UserAnnotation:
    case Kind::Runtime:
    case Kind::Driver: return Side::Cpu;
    case Kind::Kernel:
    case Kind::Memcpy:
    case Kind::Memset:
    case Kind::GpuUserAnnotation: return Side::Device;
    case Kind::Instant:  // Kineto's markers ("Iteration Start", "Record Window End"), [memory]
    case Kind::Trace:    // the capture's span: written by Kineto's logger, not a profiled activity
      return Side::Skip;
    case Kind::Other: break;
  }
  // python_function (with_stack=True) is in the trace but not in Python's table (checked on
  // torch 2.11); ac2g and fwdbwd are the JSON's flow arrows.
  if (e.category == "python_function" || e.category == "ac2g" || e.category == "fwdbwd") return Side::Skip;
  if (e.category == "cuda_sync") return Side::Device;
  // "overhead" (Activity Buffer Request, Lazy Function Loading, ...) and unknown types: Python
  // takes unknown activity types for CPU events, so they are CPU rows with Self CPU time.
  return Side::Cpu;
}

using ThreadKey = std::pair<int64_t, int64_t>;  // (pid, tid)

// One entry of Python's FunctionEvent list.
struct Node {
  // What the passes below read of the event, copied in: they walk the nodes in time order, and
  // reaching back into the events (file order) from there would miss the cache at every step.
  Kind kind = Kind::Other;
  bool is_async = false;
  int64_t start_ns = 0, dur_ns = 0, linked_id = 0;
  int64_t end_ns() const { return start_ns + dur_ns; }
  bool is_user_annotation() const { return kind == Kind::UserAnnotation || kind == Kind::GpuUserAnnotation; }

  std::string_view key;  // the event's name, or "ProfilerStep*" (no copies: 100k+ events)
  Side side = Side::Cpu;
  ThreadKey thread;
  int64_t id = 0;  // correlation id (an overhead event borrows one, see below)
  int parent = -1;
  std::vector<int> children;  // direct CPU children
  int64_t kernels_ns = 0;     // device work this op launched (append_kernel; only its sum is read)
  // Python's float view of the same: FunctionEvent's start/end in us relative to the trace's
  // start, and its kernels' durations (end - start), in the order Python appends them.
  double start_us = 0, end_us = 0;
  std::vector<double> kernels_us;
  std::string_view shapes;  // Event::input_shapes ("" when not recorded)
  int64_t flops = 0;
  size_t event = 0;      // index in Trace::events
  bool removed = false;  // dropped by _remove_dup_nodes
  // profile_memory: the bytes of the [memory] records that fell in [start, end] (any thread),
  // split as Python splits them (CPU / device). A top-level "[memory]" node (a record no CPU
  // event covered) carries its own record's bytes.
  int64_t cpu_mem = 0, device_mem = 0;
  bool is_memory = false;
  bool is_op() const { return kind == Kind::CpuOp || kind == Kind::UserAnnotation; }
  bool in_tree() const { return side == Side::Cpu && !is_async; }
};

std::string_view rewrite_name(std::string_view name) {
  // _rewrite_name(with_wildcard=True): all profiler steps share one row.
  return is_step_name(name) ? std::string_view("ProfilerStep*") : name;
}

// Per-thread state keyed by (pid, tid). Events come thread after thread in long runs, so the
// last lookup is remembered.
// A trace has a handful of threads, so a short list searched in order beats a tree.
template <class V>
class PerThread {
 public:
  V& operator[](const ThreadKey& k) {
    if (!last_ || last_key_ != k) {
      auto it = std::find_if(slots_.begin(), slots_.end(), [&](const auto& s) { return s.first == k; });
      if (it == slots_.end()) it = slots_.insert(slots_.end(), {k, std::make_unique<V>()});
      last_ = it->second.get();
      last_key_ = k;
    }
    return *last_;
  }

 private:
  std::vector<std::pair<ThreadKey, std::unique_ptr<V>>> slots_;  // boxed: references stay valid
  ThreadKey last_key_{};
  V* last_ = nullptr;
};

// Python's KinetoEvent gives an event without a correlation id of its own (CUPTI overhead such
// as "Activity Buffer Request") the id of the event it sits in on its thread: the innermost
// op or unlinked Kineto event still open when it starts (build_tree in collection.cpp). Through
// that id the overhead row receives the device time of that op's kernels a second time. Python's
// tables of cold runs show this double count; we mirror it so the two tables agree.
void borrow_correlation_ids(std::vector<Node>& nodes) {
  struct Open {
    int node;
    int64_t min_end;  // the earliest end of this entry and every entry below it
  };
  PerThread<std::vector<Open>> open;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    Node& n = nodes[i];
    // Linked Kineto events already hang off their op and stay out of this tree.
    if (n.side != Side::Cpu || n.is_memory || (!n.is_op() && n.linked_id != 0)) continue;
    auto& stack = open[n.thread];
    // Events that ended before this one starts are closed, with whatever is still above them:
    // the stack is cut at the lowest such entry, the first whose min_end (non-increasing up the
    // stack) is before the start.
    if (!stack.empty() && stack.back().min_end < n.start_ns)
      stack.erase(std::partition_point(stack.begin(), stack.end(),
                                       [&](const Open& o) { return o.min_end >= n.start_ns; }),
                  stack.end());
    if (n.id == 0 && !stack.empty()) n.id = nodes[stack.back().node].id;
    if (n.dur_ns > 0)
      stack.push_back({i, stack.empty() ? n.end_ns() : std::min(stack.back().min_end, n.end_ns())});
  }
}

struct MemRec {
  int64_t start_ns;
  size_t event;
};

// Python's MemRecordsAcc: the records whose time lies in [start, end] (both ends included, any
// thread), each CPU event's sum split into CPU and device bytes, and which records some CPU
// event covered (the others become top-level "[memory]" events). Prefix sums and a coverage
// count over the records in time order.
struct MemoryIndex {
  std::vector<int64_t> times, cpu_sum, device_sum;
  std::vector<char> covered;
  template <class OrderVec>
  MemoryIndex(const Trace& trace, const std::vector<MemRec>& memory, const OrderVec& order) {
    if (memory.empty()) return;
    times.reserve(memory.size());
    cpu_sum.assign(memory.size() + 1, 0);
    device_sum.assign(memory.size() + 1, 0);
    for (size_t k = 0; k < memory.size(); ++k) {
      const Event& e = trace.events[memory[k].event];
      times.push_back(memory[k].start_ns);
      cpu_sum[k + 1] = cpu_sum[k] + (e.memory->on_cpu() ? e.bytes : 0);
      device_sum[k + 1] = device_sum[k] + (e.memory->on_device() ? e.bytes : 0);
    }
    std::vector<int> cover(memory.size() + 1, 0);
    for (const auto& o : order) {
      const Event& e = trace.events[o.index];
      if (side_of(e) != Side::Cpu) continue;
      const auto [lo, hi] = range(e.start_ns, e.end_ns());
      if (lo < hi) ++cover[lo], --cover[hi];
    }
    covered.assign(memory.size(), 0);
    int64_t open = 0;
    for (size_t k = 0; k < memory.size(); ++k) covered[k] = (open += cover[k]) > 0;
  }
  std::pair<size_t, size_t> range(int64_t start, int64_t end) const {
    return {static_cast<size_t>(std::lower_bound(times.begin(), times.end(), start) - times.begin()),
            static_cast<size_t>(std::upper_bound(times.begin(), times.end(), end) - times.begin())};
  }
  void usage(int64_t start, int64_t end, int64_t& cpu, int64_t& device) const {
    if (times.empty()) return;
    const auto [lo, hi] = range(start, end);
    if (lo >= hi) return;
    cpu = cpu_sum[hi] - cpu_sum[lo];
    device = device_sum[hi] - device_sum[lo];
  }
};

// Device work with the op it belongs to ("External id"), in file order: GPU attribution.
struct DeviceSpan {
  int64_t link, start_ns, end_ns;
};

// Python's final order: by start, longer first on ties, then file order (a stable sort).
// Sorted as small keys, then the nodes are built in that order: sorting the nodes themselves,
// or pointers compared through the events, costs several times more on 100k+ events.
struct Order {
  int64_t start, neg_end;
  size_t index;  // file order
  bool operator<(const Order& o) const {
    return std::tie(start, neg_end, index) < std::tie(o.start, o.neg_end, o.index);
  }
};

// What one pass over the events in file order collects for build_event_list.
struct EventScan {
  // Python's times are relative to the profiler's start (result.trace_start_ns()), which Kineto
  // writes as the start of the "PyTorch Profiler (N)" span (category "Trace"): the first one in
  // the file. Without one, the earliest event stands in (the reader's 0).
  int64_t t0 = 0;
  bool have_t0 = false;
  std::vector<DeviceSpan> device_spans;
  // Kineto-side CPU events (runtime/driver calls, overhead) belong to the thread of the op they
  // ran in. Without one, Python gives them the thread that post-processes the profile; here the
  // thread of the earliest op/annotation stands in for it.
  std::unordered_map<int64_t, ThreadKey> op_thread;
  const Event* first_op = nullptr;
  std::vector<Order> order;
  std::vector<MemRec> memory;  // profile_memory's records, by time (MemRecordsAcc)
};

void scan_events(const Trace& trace, EventScan& scan) {
  scan.op_thread.reserve(trace.events.size() / 2);
  scan.order.reserve(trace.events.size());
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (e.kind == Kind::Trace && !scan.have_t0) {
      scan.t0 = e.start_ns;
      scan.have_t0 = true;
    }
    if (e.memory && e.name == "[memory]") scan.memory.push_back({e.start_ns, i});
    if (e.kind == Kind::CpuOp || e.kind == Kind::UserAnnotation) {
      if (e.id > 0) scan.op_thread.emplace(e.id, ThreadKey{e.pid, e.tid});
      if (!scan.first_op || e.start_ns < scan.first_op->start_ns) scan.first_op = &e;
    }
    const Side side = side_of(e);
    if (side == Side::Skip || is_filtered_name(e.name)) continue;
    // Not the GPU-side annotation: it names its CPU annotation, yet Python never adds it to that
    // annotation's CUDA time (the H200 tables: matmul_add's CUDA total = its kernels only).
    if (side == Side::Device && e.kind != Kind::GpuUserAnnotation && e.linked_id > 0)
      scan.device_spans.push_back({e.linked_id, e.start_ns, e.end_ns()});
    scan.order.push_back({e.start_ns, -e.end_ns(), i});
  }
}

// A top-level "[memory]" node: a record no CPU event covered (createFunctionEventForMemoryEvents).
Node memory_node(const Event& e, size_t event, int64_t t0) {
  Node n;
  n.kind = Kind::Other;
  n.start_ns = e.start_ns;
  n.start_us = n.end_us = static_cast<double>(e.start_ns - t0) / 1000.0;
  n.event = event;
  n.key = "[memory]";
  n.thread = {e.pid, e.tid};
  n.is_memory = true;
  (e.memory->on_cpu() ? n.cpu_mem : n.device_mem) = e.memory->on_cpu() || e.memory->on_device() ? e.bytes : 0;
  return n;
}

// The node of event `index`: times relative to t0, its memory usage, and (for Kineto-side CPU
// events) the thread of the op it ran in, or `home`.
Node event_node(const Trace& trace, size_t index, const EventScan& scan, const MemoryIndex& mem_index,
                const ThreadKey& home) {
  const Event& e = trace.events[index];
  const int64_t t0 = scan.t0;
  const Side side = side_of(e);
  Node n;
  n.kind = e.kind;
  n.is_async = e.is_async;
  n.start_ns = e.start_ns;
  n.dur_ns = e.dur_ns;
  n.start_us = static_cast<double>(e.start_ns - t0) / 1000.0;
  n.end_us = static_cast<double>(e.end_ns() - t0) / 1000.0;
  n.shapes = e.input_shapes;
  n.flops = trace.with_flops ? e.flops : 0;  // Python: kineto_event.flops() is 0 without with_flops
  n.event = index;
  n.linked_id = e.linked_id;
  n.key = rewrite_name(e.name);
  n.side = side;
  n.thread = {e.pid, e.tid};
  n.id = e.id;
  if (side == Side::Cpu) mem_index.usage(e.start_ns, e.end_ns(), n.cpu_mem, n.device_mem);
  if (side == Side::Cpu && !n.is_op()) {
    auto it = scan.op_thread.find(e.linked_id);
    n.thread = it != scan.op_thread.end() ? it->second : home;
  }
  return n;
}

// GPU attribution: device events are filed under their linked id (the op's "External id");
// each unlinked, synchronous CPU event takes the time of the device work filed under its id.
// Python appends each op's kernels in the order of its event list (here: file order).
void attribute_device_time(std::vector<Node>& nodes, const std::vector<DeviceSpan>& device_spans,
                           int64_t t0) {
  std::unordered_map<int64_t, int64_t> device_by_link;
  std::unordered_map<int64_t, std::vector<double>> device_us_by_link;
  for (const DeviceSpan& d : device_spans) {
    device_by_link[d.link] += d.end_ns - d.start_ns;
    device_us_by_link[d.link].push_back(static_cast<double>(d.end_ns - t0) / 1000.0 -
                                        static_cast<double>(d.start_ns - t0) / 1000.0);
  }
  for (auto& n : nodes) {
    if (n.linked_id != 0 || !n.in_tree() || n.id <= 0) continue;
    if (auto it = device_by_link.find(n.id); it != device_by_link.end()) n.kernels_ns = it->second;
    if (auto it = device_us_by_link.find(n.id); it != device_us_by_link.end()) n.kernels_us = it->second;
  }
}

std::vector<Node> build_event_list(const Trace& trace) {
  EventScan scan;
  scan_events(trace, scan);
  auto& order = scan.order;
  auto& memory = scan.memory;
  // Python appends the records no CPU event covered after every other event, then sorts all
  // stably: at equal (start, end) they come last, in their own order.
  std::stable_sort(memory.begin(), memory.end(),
                   [](const MemRec& a, const MemRec& b) { return a.start_ns < b.start_ns; });
  MemoryIndex mem_index(trace, memory, order);
  for (size_t k = 0; k < memory.size(); ++k)
    if (!mem_index.covered[k]) {
      const Event& e = trace.events[memory[k].event];
      order.push_back({e.start_ns, -e.start_ns, trace.events.size() + memory[k].event});
    }
  std::stable_sort(order.begin(), order.end());  // merge sort: events come nearly in order
  const ThreadKey home = scan.first_op ? ThreadKey{scan.first_op->pid, scan.first_op->tid} : ThreadKey{0, 0};

  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (const Order& o : order) {
    if (o.index >= trace.events.size())  // a top-level "[memory]"
      nodes.push_back(
          memory_node(trace.events[o.index - trace.events.size()], o.index - trace.events.size(), scan.t0));
    else
      nodes.push_back(event_node(trace, o.index, scan, mem_index, home));
  }
  borrow_correlation_ids(nodes);
  if (scan.device_spans.empty()) return nodes;  // a CPU-only trace: no device time to attribute
  attribute_device_time(nodes, scan.device_spans, scan.t0);
  return nodes;
}

// _populate_cpu_children: per thread, walk events by (start, -end) with a stack of open parents.
// An event is a child of the innermost open event that fully contains it; partial overlaps are
// not nested.
void populate_cpu_children(std::vector<Node>& nodes) {
  PerThread<std::vector<int>> stacks;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    Node& n = nodes[i];
    if (!n.in_tree()) continue;
    auto& stack = stacks[n.thread];
    while (!stack.empty()) {
      Node& p = nodes[stack.back()];
      if (n.start_ns >= p.end_ns() || n.end_ns() > p.end_ns()) {
        stack.pop_back();
      } else {
        p.children.push_back(i);
        n.parent = stack.back();
        break;
      }
    }
    stack.push_back(i);
  }
}

// _remove_dup_nodes: an event whose parent has the same name and no other child is merged into
// the parent (one call fewer). Mirrored as Python does it, including that the parent's own
// kernels are replaced by the child's.
void remove_dup_nodes(std::vector<Node>& nodes) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& n : nodes) {
      if (n.removed || n.parent < 0) continue;
      Node& p = nodes[n.parent];
      if (p.key != n.key || p.children.size() != 1) continue;
      for (int c : n.children) nodes[c].parent = n.parent;
      p.children = std::move(n.children);
      p.kernels_ns = n.kernels_ns;
      p.kernels_us = n.kernels_us;
      n.removed = true;
      changed = true;
    }
  }
}

}  // namespace

bool is_filtered_name(std::string_view name) {
  // Python's table leaves these out (profiler_util.py's _filter_name):
  static constexpr std::string_view kFiltered[] = {
      // memory records (profile_memory) and out-of-memory markers,
      "[memory]", "[OutOfMemory]",
      // record_function's own enter/exit calls,
      "profiler::_record_function_enter", "profiler::_record_function_enter_new",
      "profiler::_record_function_exit",
      // and the tensor queries autograd makes around every op.
      "aten::is_leaf", "aten::output_nr", "aten::_version"};
  return std::find(std::begin(kFiltered), std::end(kFiltered), name) != std::end(kFiltered);
}

namespace {

// EventList._set_backward_stacktraces: an op inside a backward node (scope BACKWARD_FUNCTION)
// takes the stack of the first forward op, in event order, with the node's sequence number on
// the node's forward thread; with no such op (AccumulateGrad names no forward thread), none.
// The trace has no scope, but the engine calls every node inside an
// "autograd::engine::evaluate_function: <node>" range: a backward node is the child of one
// that bears its name. The trace names the forward thread by the profiler's own thread number,
// not by its tid: the forward thread is the one thread whose other events carry that sequence
// number.
constexpr std::string_view kEvaluate = "autograd::engine::evaluate_function: ";
bool is_evaluate_function(const Event& e) { return e.name.rfind(kEvaluate, 0) == 0; }

void set_backward_stacks(const Trace& trace, const std::vector<Node>& nodes,
                         std::vector<std::vector<std::string>>& stacks) {
  auto event = [&](int i) -> const Event& { return trace.events[nodes[i].event]; };
  auto is_backward_node = [&](int i) {
    const int p = nodes[i].parent;
    return p >= 0 && is_evaluate_function(event(p)) &&
           std::string_view(event(p).name).substr(kEvaluate.size()) == event(i).name;
  };
  auto bw_parent = [&](int i) {
    for (; i >= 0; i = nodes[i].parent)
      if (is_backward_node(i)) return i;
    return -1;
  };
  std::map<std::pair<int64_t, ThreadKey>, int> forward;  // (sequence number, thread) -> first node
  std::map<int64_t, std::vector<ThreadKey>> threads_of;  // sequence number -> forward threads
  std::vector<int> bw(nodes.size(), -1);
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (nodes[i].removed || nodes[i].side != Side::Cpu) continue;
    bw[i] = bw_parent(i);
    if (bw[i] >= 0) continue;
    const auto key = std::make_pair(event(i).sequence_nr, nodes[i].thread);
    if (forward.emplace(key, i).second && !is_evaluate_function(event(i)))
      threads_of[key.first].push_back(key.second);
  }
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (bw[i] < 0) continue;
    const auto threads = threads_of.find(event(bw[i]).sequence_nr);
    if (event(bw[i]).fwd_thread_id <= 0 || threads == threads_of.end() || threads->second.size() != 1) {
      stacks[i].clear();
      continue;
    }
    stacks[i] = stacks[forward.at({threads->first, threads->second.front()})];
  }
}

// Each node's stack, as FunctionEvent.stack: the event's own (KinetoEvent::stack(), the saved
// trace's "Call stack"), then backward ops take their forward op's.
// The python_function events around each of `queries` (CPU-side events), innermost first: the
// Python frames a launch call with no op to hang off ran in (cudaDeviceSynchronize under
// torch.cuda.synchronize()), as the profiler's tree nests it by time.
std::unordered_map<size_t, std::vector<std::string>> frames_around(const Trace& trace,
                                                                   std::vector<size_t> queries) {
  const auto& ev = trace.events;
  std::vector<size_t> order = std::move(queries);
  const size_t n_queries = order.size();
  for (size_t i = 0; i < ev.size(); ++i)
    if (ev[i].category == "python_function") order.push_back(i);
  // By start; at a tie the frame first (it encloses), then the longer.
  std::vector<char> is_query(ev.size(), 0);
  for (size_t q = 0; q < n_queries; ++q) is_query[order[q]] = 1;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(ev[a].start_ns, is_query[a], b) < std::tie(ev[b].start_ns, is_query[b], a);
  });
  std::map<ThreadKey, std::vector<size_t>> open;  // per thread, the frames still open
  std::unordered_map<size_t, std::vector<std::string>> out;
  for (size_t i : order) {
    auto& stack = open[{ev[i].pid, ev[i].tid}];
    while (!stack.empty() && ev[stack.back()].end_ns() < ev[i].end_ns()) stack.pop_back();
    if (!is_query[i]) {
      stack.push_back(i);
      continue;
    }
    auto& frames = out[i];
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (keep_stack_entry(ev[*it].name)) frames.push_back(ev[*it].name);
  }
  return out;
}

// Each node's stack, as FunctionEvent.stack. Kineto writes a "Call stack" on the ops only; the
// rest hang off something in the profiler's tree, and take the Python frames above it:
//   a launch call and the device work it launched: the op that launched them (the one whose
//   External id they carry; Kineto links them before the tree is built);
//   a GPU-side annotation: the op that launched its first kernel (Kineto gives it that link);
//   a launch call of no op (a synchronize): the Python frames it ran in.
// Then backward ops take their forward op's stack.
std::vector<std::vector<std::string>> node_stacks(const Trace& trace, const std::vector<Node>& nodes) {
  const auto& ev = trace.events;
  // No op with a stack: not verbose, and Python keeps no stack for any event then.
  if (std::none_of(ev.begin(), ev.end(), [](const Event& e) { return !e.stack.empty(); }))
    return std::vector<std::vector<std::string>>(nodes.size());
  std::unordered_map<int64_t, const Event*> op_by_id;
  std::vector<const Event*> device;  // device work, by start
  for (const Event& e : ev) {
    if ((e.kind == Kind::CpuOp || e.kind == Kind::UserAnnotation) && e.id > 0) op_by_id.emplace(e.id, &e);
    if (is_device_work(e)) device.push_back(&e);
  }
  std::sort(device.begin(), device.end(),
            [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  auto stack_of_op = [&](int64_t id) {
    const auto it = op_by_id.find(id);
    return it == op_by_id.end() ? std::vector<std::string>{} : it->second->stack;
  };
  std::vector<std::vector<std::string>> out(nodes.size());
  std::vector<size_t> unlinked;  // launch calls of no op
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Event& e = ev[nodes[i].event];
    out[i] = e.stack;
    if (nodes[i].is_memory) continue;  // Python gives a top-level [memory] event no stack
    if (!e.stack.empty() || e.kind == Kind::CpuOp || e.kind == Kind::UserAnnotation) continue;
    if (e.kind == Kind::GpuUserAnnotation) {
      auto first = std::lower_bound(device.begin(), device.end(), e.start_ns,
                                    [](const Event* d, int64_t t) { return d->start_ns < t; });
      for (; first != device.end() && (*first)->start_ns <= e.end_ns(); ++first)
        if ((*first)->pid == e.pid) {
          out[i] = stack_of_op((*first)->linked_id);
          break;
        }
    } else if (e.linked_id > 0 && op_by_id.count(e.linked_id)) {
      out[i] = stack_of_op(e.linked_id);
    } else if (nodes[i].side == Side::Cpu) {
      unlinked.push_back(i);
    }
  }
  if (!unlinked.empty()) {
    std::vector<size_t> events;
    for (size_t i : unlinked) events.push_back(nodes[i].event);
    auto frames = frames_around(trace, events);
    for (size_t i : unlinked) out[i] = std::move(frames[nodes[i].event]);
  }
  set_backward_stacks(trace, nodes, out);
  return out;
}

}  // namespace

namespace {

// FunctionEvent's device_time_total: own kernels plus the children's totals. Children come
// after their parent in `nodes`, so one backward pass fills every total before it is needed.
// Twice: in integer ns, and in float us summed as Python sums (sum(kernels) + sum(children)).
void device_totals(const std::vector<Node>& nodes, std::vector<int64_t>& total,
                   std::vector<double>& total_us) {
  total.assign(nodes.size(), 0);
  total_us.assign(nodes.size(), 0.0);
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    const Node& n = nodes[i];
    if (n.removed) continue;
    if (n.side == Side::Device) {
      total[i] = n.dur_ns;
      total_us[i] = n.end_us - n.start_us;
    } else if (n.in_tree()) {
      total[i] = n.kernels_ns;
      double kernels = 0, children = 0;
      for (double k : n.kernels_us) kernels += k;
      for (int c : n.children) {
        total[i] += total[c];
        children += total_us[c];
      }
      total_us[i] = kernels + children;
    }
  }
}

// Kernel names run to hundreds of characters and repeat on every launch: hashing their length
// and three words (not every byte) is enough to tell the few hundred distinct names of a trace
// apart, and equal hashes still compare the whole name.
struct NameHash {
  size_t operator()(std::string_view s) const {
    if (s.size() < 16) return std::hash<std::string_view>{}(s);
    uint64_t a, b, c;  // 8 bytes from the start, the middle and the end
    std::memcpy(&a, s.data(), 8);
    std::memcpy(&b, s.data() + s.size() / 2 - 4, 8);
    std::memcpy(&c, s.data() + s.size() - 8, 8);
    uint64_t h = s.size() * 0x9e3779b97f4a7c15ULL;
    for (uint64_t w : {a, b, c}) h = (h ^ w) * 0xff51afd7ed558ccdULL;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

// key_averages()' groups: (name, CPU/device, user annotation[, input shapes][, stack[:n]]),
// each with its four row slots (CPU, CPU annotation, device, device annotation).
class GroupIndex {
 public:
  explicit GroupIndex(const GroupOptions& g) : g_(g) {}
  std::array<int, 4>& slots(std::string_view name, std::string_view shapes,
                            const std::vector<std::string>* stack) {
    if (!g_.group_by_input_shape && g_.group_by_stack_n <= 0) return fresh(by_name_.try_emplace(name));
    // The key also holds the shapes and the stack's first entries: "name\0shapes\x1fframe..." (owned here).
    key_.assign(name);
    if (g_.group_by_input_shape) (key_ += '\0') += shapes;
    if (stack)
      for (size_t i = 0; i < stack->size() && static_cast<int>(i) < g_.group_by_stack_n; ++i)
        (key_ += '\x1f') += (*stack)[i];
    return fresh(by_key_.try_emplace(key_));
  }

 private:
  template <class It>
  static std::array<int, 4>& fresh(std::pair<It, bool> p) {
    if (p.second) p.first->second.fill(-1);
    return p.first->second;
  }
  const GroupOptions& g_;
  std::unordered_map<std::string_view, std::array<int, 4>, NameHash> by_name_;
  std::unordered_map<std::string, std::array<int, 4>> by_key_;
  std::string key_;
};

// One event's times added to its row, as FunctionEventAvg.add does.
void add_to_row(TableRow& row, const std::vector<Node>& nodes, size_t i,
                const std::vector<int64_t>& device_total, const std::vector<double>& device_total_us) {
  const Node& n = nodes[i];
  row.calls += 1;
  row.flops += n.flops;
  if (n.side == Side::Device) {
    const double us = n.end_us - n.start_us;
    row.self_device_ns += n.dur_ns;
    row.device_total_ns += n.dur_ns;
    row.self_device_us += us;
    row.device_total_us += us;
    return;
  }
  const double elapsed = n.end_us - n.start_us;
  row.cpu_total_ns += n.dur_ns;  // async events too: they only lack "self" numbers
  row.cpu_total_us += elapsed;
  row.cpu_memory += n.cpu_mem;
  row.device_memory += n.device_mem;
  if (!n.in_tree()) return;
  int64_t children_cpu = 0, children_device = 0, children_cpu_mem = 0, children_device_mem = 0;
  double children_cpu_us = 0, children_device_us = 0;
  for (int c : n.children) {
    children_cpu += nodes[c].dur_ns;
    children_device += device_total[c];
    children_cpu_us += nodes[c].end_us - nodes[c].start_us;
    children_device_us += device_total_us[c];
    children_cpu_mem += nodes[c].cpu_mem;
    children_device_mem += nodes[c].device_mem;
  }
  row.self_cpu_memory += n.cpu_mem - children_cpu_mem;
  row.self_device_memory += n.device_mem - children_device_mem;
  row.self_cpu_ns += n.dur_ns - children_cpu;
  row.device_total_ns += device_total[i];
  row.self_device_ns += device_total[i] - children_device;
  row.self_cpu_us += elapsed - children_cpu_us;
  row.device_total_us += device_total_us[i];
  row.self_device_us += device_total_us[i] - children_device_us;
}

}  // namespace

std::vector<TableRow> key_averages(const Trace& trace, const GroupOptions& group) {
  std::vector<Node> nodes = build_event_list(trace);
  populate_cpu_children(nodes);
  remove_dup_nodes(nodes);
  std::vector<int64_t> device_total;
  std::vector<double> device_total_us;
  device_totals(nodes, device_total, device_total_us);
  // with_stack: each node's source locations (only read when grouping by them).
  const std::vector<std::vector<std::string>> stacks =
      group.group_by_stack_n > 0 ? node_stacks(trace, nodes) : std::vector<std::vector<std::string>>{};

  // One group per key, in first-seen order.
  std::vector<TableRow> rows;
  GroupIndex index(group);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.removed) continue;
    const bool on_device = n.side == Side::Device;
    const bool annotation = n.is_user_annotation();
    const std::string_view shapes = n.shapes.empty() ? std::string_view("[]") : n.shapes;
    const std::vector<std::string>* stack = stacks.empty() ? nullptr : &stacks[i];
    int& slot = index.slots(n.key, shapes, stack)[(on_device ? 2 : 0) + (annotation ? 1 : 0)];
    if (slot < 0) {
      slot = static_cast<int>(rows.size());
      TableRow& r = rows.emplace_back();
      r.key = std::string(n.key);
      r.on_device = on_device;
      r.is_user_annotation = annotation;
      r.is_async = n.is_async;
      if (group.group_by_input_shape) r.input_shapes = std::string(shapes);
      if (stack)  // Python: the first call's stack, cut to its first n entries
        r.stack.assign(stack->begin(),
                       stack->begin() + std::min<size_t>(stack->size(), group.group_by_stack_n));
    }
    add_to_row(rows[slot], nodes, i, device_total, device_total_us);
  }
  return rows;
}

std::string format_time_us(double us) {
  char buf[64];
  if (us >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3fs", us / 1e6);
  else if (us >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3fms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3fus", us);
  return buf;
}

std::string format_memory(int64_t bytes) {
  constexpr int64_t kKB = 1024, kMB = 1024 * kKB, kGB = 1024 * kMB;
  const int64_t mag = bytes < 0 ? -bytes : bytes;
  char buf[64];
  if (mag >= kGB)
    std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / kGB);
  else if (mag >= kMB)
    std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(bytes) / kMB);
  else if (mag >= kKB)
    std::snprintf(buf, sizeof buf, "%.2f KB", static_cast<double>(bytes) / kKB);
  else
    return std::to_string(bytes) + " B";
  return buf;
}

std::string format_time_share(double part_us, double total_us) {
  if (total_us == 0) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", part_us * 100.0 / total_us);
  return buf;
}

namespace {

// Python sorts on getattr(evt, sort_by) with "cuda"/"xpu"/"privateuse1" read as "device".
struct SortKey {
  std::string_view name;  // Python's attribute name (the "device" spelling)
  double (*value)(const TableRow&);
};
double avg(double total, int64_t calls) { return calls == 0 ? 0.0 : total / static_cast<double>(calls); }
constexpr SortKey kSortKeys[] = {
    {"cpu_time", [](const TableRow& r) { return avg(r.cpu_total_us, r.calls); }},
    {"device_time", [](const TableRow& r) { return avg(r.device_total_us, r.calls); }},
    {"cpu_time_total", [](const TableRow& r) { return r.cpu_total_us; }},
    {"device_time_total", [](const TableRow& r) { return r.device_total_us; }},
    {"self_cpu_time_total", [](const TableRow& r) { return r.self_cpu_us; }},
    {"self_device_time_total", [](const TableRow& r) { return r.self_device_us; }},
    {"count", [](const TableRow& r) { return static_cast<double>(r.calls); }},
    {"flops", [](const TableRow& r) { return static_cast<double>(r.flops); }},
    // profile_memory (without it every row has 0, and these keep the key_averages order).
    {"cpu_memory_usage", [](const TableRow& r) { return static_cast<double>(r.cpu_memory); }},
    {"device_memory_usage", [](const TableRow& r) { return static_cast<double>(r.device_memory); }},
    {"self_cpu_memory_usage", [](const TableRow& r) { return static_cast<double>(r.self_cpu_memory); }},
    {"self_device_memory_usage", [](const TableRow& r) { return static_cast<double>(r.self_device_memory); }},
};

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

const SortKey* find_sort_key(const std::string& sort_by) {
  if (sort_by.empty()) return nullptr;
  const std::string attr = replace_all(replace_all(replace_all(sort_by, "cuda", "device"), "xpu", "device"),
                                       "privateuse1", "device");
  for (const auto& k : kSortKeys)
    if (k.name == attr) return &k;
  std::string allowed;
  for (const auto& k : table_sort_keys()) allowed += (allowed.empty() ? "" : ", ") + k;
  throw std::invalid_argument("table: unknown sort_by '" + sort_by + "'; use one of: " + allowed +
                              " (or \"\" for no sorting)");
}

// Python's auto_scale_flops: the unit of the smallest positive value.
std::pair<double, std::string> flops_scale(int64_t min_flops) {
  static const char* kHeaders[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
  const double log_flops = std::max(0.0, std::min(std::log10(static_cast<double>(min_flops)) / 3, 5.0));
  return {std::pow(10.0, std::floor(log_flops) * -3.0), kHeaders[static_cast<int>(log_flops)]};
}

}  // namespace

const std::vector<std::string>& table_sort_keys() {
  static const std::vector<std::string> keys = {"cpu_time_total",
                                                "cuda_time_total",
                                                "self_cpu_time_total",
                                                "self_cuda_time_total",
                                                "count",
                                                "cpu_time",
                                                "cuda_time",
                                                "flops",
                                                "cpu_memory_usage",
                                                "cuda_memory_usage",
                                                "self_cpu_memory_usage",
                                                "self_cuda_memory_usage"};
  return keys;
}

namespace {

// _build_table's columns: each cell right-aligned ("{: >w}") but the source location's
// ("{: <w}"), and followed by two spaces, lines included.
struct Column {
  size_t width = 12;
  bool left = false;
};

// What the printed rows decide about the table: which optional columns it has, their widths,
// and the footers' sums (Python's, over the rows in printed order, in float us).
struct Layout {
  std::vector<std::string> headers;
  std::vector<Column> columns;
  bool device = false, shapes = false, flops = false, stack = false;
  bool memory = false, device_memory = false;  // profile_memory's columns
  size_t shapes_width = 0, src_width = 0;
  double flops_scale = 1.0;
  double self_cpu_sum = 0, self_device_sum = 0;
};

Layout plan(const std::vector<TableRow>& rows, const TableOptions& opts) {
  Layout l;
  size_t name_width = 0, src_width = 0;
  int64_t min_flops = 0;
  for (const auto& r : rows) {
    l.device |= r.self_device_us > 0;
    l.device_memory |= r.self_device_memory > 0;
    l.self_cpu_sum += r.self_cpu_us;
    // Python's denominator counts device rows that are not annotations. The GPU-side annotation
    // still gets a share of it, so its Self CUDA % can exceed 100%; we mirror that on purpose, so
    // the C++ and Python tables read alike (the lessons point the quirk out).
    if (r.on_device && !r.is_user_annotation) l.self_device_sum += r.self_device_us;
    name_width = std::max(name_width, r.key.size() + 4);
    l.shapes |= !r.input_shapes.empty() && r.input_shapes != "[]";
    l.shapes_width = std::max(l.shapes_width, r.input_shapes.size() + 4);
    if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;
    l.stack |= !r.stack.empty();
    for (const auto& frame : r.stack) src_width = std::max(src_width, frame.size() + 4);
  }
  if (opts.max_name_width > 0) name_width = std::min(name_width, static_cast<size_t>(opts.max_name_width));
  l.shapes_width = std::min<size_t>(l.shapes_width, 80);  // Python's max_shapes_column_width
  l.src_width =
      opts.max_src_column_width > 0 ? std::min<size_t>(src_width, opts.max_src_column_width) : src_width;
  l.flops = opts.with_flops && min_flops > 0;
  std::string flops_unit;
  if (l.flops) std::tie(l.flops_scale, flops_unit) = flops_scale(min_flops);

  l.headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (l.device)
    l.headers.insert(l.headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  l.memory = opts.profile_memory;
  l.device_memory = l.memory && opts.use_device && l.device_memory;
  if (l.memory) l.headers.insert(l.headers.end(), {"CPU Mem", "Self CPU Mem"});
  if (l.device_memory) l.headers.insert(l.headers.end(), {"CUDA Mem", "Self CUDA Mem"});
  l.headers.push_back("# of Calls");
  l.columns.assign(l.headers.size(), Column{});
  l.columns[0].width = name_width;
  if (l.shapes) {
    l.headers.push_back("Input Shapes");
    l.columns.push_back({l.shapes_width, false});
  }
  if (l.stack) {
    l.headers.push_back("Source Location");
    l.columns.push_back({l.src_width, true});
  }
  if (l.flops) {
    l.headers.push_back("Total " + flops_unit);
    l.columns.push_back({12, false});
  }
  return l;
}

// Python's trim_path: a frame longer than the column keeps its end, behind "...".
std::string trim_path(const std::string& path, size_t width) {
  if (path.size() <= width) return path;
  std::string tail = path.substr(path.size() - width);
  if (tail.size() > 3) tail = "..." + tail.substr(3);
  return tail;
}

}  // namespace

std::string table_name_cell(const std::string& key, int max_name_width) {
  if (max_name_width > 0 && key.size() >= static_cast<size_t>(max_name_width - 3))
    return key.substr(0, max_name_width - 3) + "...";
  return key;
}

namespace {

// One row's cells, in the order Python fills them. With both FLOPs and a stack, Python puts
// the FLOPs before the source location although its headers name them the other way round:
// each value lands in the other's column, and we print the same.
std::vector<std::string> row_cells(const TableRow& r, const Layout& l, const TableOptions& opts) {
  std::vector<std::string> cells = {
      table_name_cell(r.key, opts.max_name_width),
      format_time_share(r.self_cpu_us, l.self_cpu_sum),
      format_time_us(r.self_cpu_us),
      // Python prints a bare 0 here for async events.
      r.is_async ? "0" : format_time_share(r.cpu_total_us, l.self_cpu_sum),
      format_time_us(r.cpu_total_us),
      format_time_us(avg(r.cpu_total_us, r.calls)),
  };
  if (l.device)
    cells.insert(cells.end(),
                 {format_time_us(r.self_device_us), format_time_share(r.self_device_us, l.self_device_sum),
                  format_time_us(r.device_total_us), format_time_us(avg(r.device_total_us, r.calls))});
  if (l.memory) cells.insert(cells.end(), {format_memory(r.cpu_memory), format_memory(r.self_cpu_memory)});
  if (l.device_memory)
    cells.insert(cells.end(), {format_memory(r.device_memory), format_memory(r.self_device_memory)});
  cells.push_back(std::to_string(r.calls));
  if (l.shapes) cells.push_back(r.input_shapes.substr(0, l.shapes_width));
  if (l.flops) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%8.3f", static_cast<double>(r.flops) * l.flops_scale);
    cells.push_back(r.flops <= 0 ? "--" : buf);
  }
  if (l.stack) cells.push_back(r.stack.empty() ? "" : trim_path(r.stack.front(), l.src_width));
  return cells;
}

}  // namespace

std::string format_table(const std::vector<TableRow>& all_rows, const TableOptions& opts) {
  const SortKey* sort_key = find_sort_key(opts.sort_by);
  if (opts.max_name_width > 0 && opts.max_name_width <= 3)
    throw std::invalid_argument("table: max_name_width must be > 3 (or <= 0 for no limit)");
  if (all_rows.empty()) return "";

  std::vector<TableRow> rows = all_rows;
  // Python sorts with reverse=True, which keeps equal rows in their original order.
  if (sort_key)
    std::stable_sort(rows.begin(), rows.end(), [&](const TableRow& a, const TableRow& b) {
      return sort_key->value(a) > sort_key->value(b);
    });
  const Layout l = plan(rows, opts);

  std::string out;
  auto add_line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t pad = cells[c].size() < l.columns[c].width ? l.columns[c].width - cells[c].size() : 0;
      if (!l.columns[c].left) out.append(pad, ' ');
      out += cells[c];
      if (l.columns[c].left) out.append(pad, ' ');
      out += "  ";
    }
    out += '\n';
  };
  std::string separator;
  for (const Column& c : l.columns) separator += std::string(c.width, '-') + "  ";
  separator += '\n';

  out += separator;
  add_line(l.headers);
  out += separator;
  int shown = 0;
  for (const auto& r : rows) {
    if (shown == opts.row_limit) break;
    ++shown;
    add_line(row_cells(r, l, opts));
    if (!l.stack) continue;
    // The other frames under the row, each in the last column, then an empty line.
    std::vector<std::string> empty(l.columns.size(), "");
    for (size_t f = 1; f < r.stack.size(); ++f) {
      empty.back() = trim_path(r.stack[f], l.src_width);
      add_line(empty);
    }
    empty.back().clear();
    add_line(empty);
  }
  out += separator;
  out += "Self CPU time total: " + format_time_us(l.self_cpu_sum) + "\n";
  if (l.device) out += "Self CUDA time total: " + format_time_us(l.self_device_sum) + "\n";
  return out;
}

std::string key_averages_table(const Trace& trace, const TableOptions& opts, const GroupOptions& group) {
  TableOptions o = opts;
  o.with_flops = o.with_flops || trace.with_flops;
  o.profile_memory = o.profile_memory || trace.profile_memory;
  // Python's use_device: the profile recorded a device (its CUDA Mem columns need one).
  o.use_device = o.use_device || !trace.devices.empty() || trace.has_device_activity();
  return format_table(key_averages(trace, group), o);
}

}  // namespace wb
