#include "workbook/profiler.hpp"

#include <ATen/record_function.h>
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#ifdef WORKBOOK_WITH_CUDA
#include <cuda_runtime_api.h>  // the device's name and free memory, before any work
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

#include "workbook/fs_util.hpp"
#include "workbook/log.hpp"
#include "workbook/rules.hpp"

// Declared in torch/csrc/profiler/kineto_shim.h, which cannot be included from outside torch's
// own build (it includes Kineto's headers without their kineto/ folder). Python's profiler
// calls it for its metadata ("record_shapes": 1, ...); so do we.
namespace torch::autograd::profiler {
TORCH_API void addMetadataJson(const std::string& key, const std::string& value);
}

namespace wb {

namespace tp = torch::autograd::profiler;
namespace ti = torch::profiler::impl;

bool cuda_available() { return torch::cuda::is_available(); }

namespace {
// What a new allocation can get on the host without swapping or the OOM killer: MemAvailable
// (free + reclaimable cache), lowered to a cgroup v2 limit (containers) when there is one.
// Negative when unknown.
double host_bytes_available(std::string& source) {
  double avail = -1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, rest;
  double kib = 0;
  while (meminfo >> key >> kib && std::getline(meminfo, rest))
    if (key == "MemAvailable:") {
      avail = kib * 1024;
      source = "host memory: MemAvailable";
      break;
    }
  if (avail < 0) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
      avail = static_cast<double>(pages) * static_cast<double>(page);
      source = "host memory: free pages";
    }
  }
  std::ifstream max_f("/sys/fs/cgroup/memory.max"), cur_f("/sys/fs/cgroup/memory.current");
  double max = 0, cur = 0;  // memory.max is "max" without a limit: the read fails, no change
  if (max_f >> max && cur_f >> cur && (avail < 0 || max - cur < avail)) {
    avail = max - cur;
    source = "this container's limit: memory.max - memory.current";
  }
  return avail;
}

double cuda_bytes_available(std::string& source) {
#ifdef WORKBOOK_WITH_CUDA
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    source = "GPU memory: cudaMemGetInfo, free of " + std::to_string(total_b) + " bytes";
    return static_cast<double>(free_b);
  }
  cudaGetLastError();  // clear the error; the allocator will report it
#endif
  (void)source;
  return -1;
}
}  // namespace

double bytes_available(bool cuda, std::string& source) {
  return cuda ? cuda_bytes_available(source) : host_bytes_available(source);
}

std::string cuda_device_name() {
#ifdef WORKBOOK_WITH_CUDA
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    return prop.name;
  cudaGetLastError();
#endif
  return "";
}

void synchronize_device() {
  if (cuda_available()) torch::cuda::synchronize();
}

// ------------------------------------------------------------------ CycleResult
struct CycleResult::Export {
  std::shared_ptr<tp::ProfilerResult> raw;
  // Kineto's one serialization, in a temp file until save_chrome_trace moves it into place:
  // written when a later session starts (see below) or by the first save.
  std::filesystem::path parked;
  bool saved = false;
  std::filesystem::path saved_path;
  bool profile_memory = false;  // ProfilerOptions::profile_memory of the session that made it
  ~Export() {
    std::error_code ec;
    if (!parked.empty()) std::filesystem::remove(parked, ec);
  }
};

namespace {
namespace fs = std::filesystem;
std::mutex g_exports_mu;
std::vector<std::weak_ptr<CycleResult::Export>> g_exports;  // results not yet saved

// Kineto's ProfilerResult::save marks the result saved before it writes, so a write that fails
// loses the trace. It therefore only ever writes into the temp folder (checked writable first),
// and the trace moves from there. Callers hold g_exports_mu.
void park(CycleResult::Export& e) {
  if (!e.parked.empty()) return;
  static int counter = 0;
  const fs::path tmp_dir = fs::temp_directory_path();
  prepare_output_dir(tmp_dir);  // throws, naming it, before Kineto consumes anything
  const fs::path path =
      tmp_dir / ("wb-trace-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".json");
  e.raw->save(path.string());
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::file_size(path, ec) == 0) {
    fs::remove(path, ec);
    throw std::runtime_error("Kineto wrote no trace to " + path.string());
  }
  e.parked = path;
}

// Before a new profiling session reuses Kineto's buffers, write out every unsaved result.
void park_unsaved_results() {
  std::lock_guard<std::mutex> lock(g_exports_mu);
  for (auto& w : g_exports) {
    auto e = w.lock();
    if (e && !e->saved && e->raw) park(*e);
  }
  g_exports.erase(std::remove_if(g_exports.begin(), g_exports.end(),
                                 [](const auto& w) {
                                   auto e = w.lock();
                                   return !e || e->saved || !e->parked.empty();
                                 }),
                  g_exports.end());
}

void register_export(const std::shared_ptr<CycleResult::Export>& e) {
  std::lock_guard<std::mutex> lock(g_exports_mu);
  g_exports.push_back(e);
}

// The folder a trace goes to: created when missing; when it cannot be, the error names it.
fs::path output_folder(const fs::path& path) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error("cannot save the trace to " + path.string() + ": the folder " + dir.string() +
                             " cannot be created (" + (ec ? ec.message() : "not a directory") +
                             "); nothing was lost: save it to another path");
  return dir;
}

// The parked trace into `tmp` (a file next to the destination): a rename when both are on one
// file system, else a copy; `moved` says whether the parked file is now `tmp`.
void stage_parked(const fs::path& parked, const fs::path& tmp, bool& moved) {
  std::error_code ec;
  moved = false;
  fs::rename(parked, tmp, ec);
  if (!ec) {
    moved = true;
    return;
  }
  ec.clear();
  fs::copy_file(parked, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write the trace to " + tmp.string() + ": " + ec.message() +
                             "; nothing was lost: save it to another path");
  }
}

// A ".gz" destination, as Python's export_chrome_trace: the parked JSON gzipped into place.
void write_gzipped(const fs::path& parked, const fs::path& path) {
  std::ifstream in(parked, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  if (!in.good() && !in.eof()) throw std::runtime_error("cannot read the parked trace " + parked.string());
  write_file_atomic(path, gzip_compress(data.str()));
}
}  // namespace

void CycleResult::save_chrome_trace(const std::filesystem::path& path) {
  if (!export_ || !export_->raw)
    throw NoProfileResult("save_chrome_trace(" + path.string() +
                          "): this CycleResult holds no profile (default-constructed or moved from)");
  if (export_->saved)
    throw std::logic_error("save_chrome_trace(" + path.string() + "): this result was already saved to " +
                           export_->saved_path.string() +
                           " (Kineto serializes a result once: copy that file instead)");
  const fs::path dir = output_folder(path);  // before anything is consumed
  {
    std::lock_guard<std::mutex> lock(g_exports_mu);
    park(*export_);
  }
  if (path.extension() == ".gz") {
    write_gzipped(export_->parked, path);  // throws before anything is removed
  } else {
    const fs::path tmp = dir / ("." + path.filename().string() + ".partial-" + std::to_string(::getpid()));
    bool moved = false;
    stage_parked(export_->parked, tmp, moved);
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
      std::error_code ignored;
      if (moved) fs::rename(tmp, export_->parked, ignored);  // the same file system: back it goes
      fs::remove(tmp, ignored);
      throw std::runtime_error("cannot move the trace into place at " + path.string() + ": " + ec.message() +
                               "; nothing was lost: save it to another path");
    }
    if (moved) export_->parked.clear();
  }
  std::error_code ec;
  if (!export_->parked.empty()) fs::remove(export_->parked, ec);
  export_->parked.clear();
  export_->saved = true;
  export_->saved_path = path;
}

std::filesystem::path CycleResult::saved_path() const {
  return export_ ? export_->saved_path : std::filesystem::path();
}

CycleResult& CycleResults::last_nonempty() {
  for (size_t i = size(); i-- > 0;)
    if (std::vector<CycleResult>::operator[](i).whole_steps > 0)
      return std::vector<CycleResult>::operator[](i);
  if (empty()) return back();  // throws, saying why there is no result
  throw NoProfileResult("wb::Profiler: none of the " + std::to_string(size()) +
                        " cycle(s) recorded a whole step (each holds only the step stop() closed)");
}

size_t CycleResults::checked(size_t i) const {
  if (i < size()) return i;
  if (empty())
    throw NoProfileResult("wb::Profiler has no result: " +
                          (why_empty_.empty()
                               ? std::string("no profiling cycle has completed yet (a result exists "
                                             "once a cycle's last active step ends, or at stop())")
                               : why_empty_));
  throw NoProfileResult("wb::Profiler result " + std::to_string(i) +
                        " does not exist: " + std::to_string(size()) + " cycle(s) completed (0 .. " +
                        std::to_string(size() - 1) + ")");
}

std::function<void(CycleResult&)> tensorboard_trace_handler(const std::filesystem::path& dir,
                                                            std::string worker_name, bool use_gzip) {
  if (worker_name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    worker_name = std::string(host) + "_" + std::to_string(::getpid());
  }
  return [dir, worker_name, use_gzip](CycleResult& r) {
    // Python: f"{worker_name}.{time.time_ns()}.pt.trace.json" (+ ".gz").
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    r.save_chrome_trace(
        dir / (worker_name + "." + std::to_string(ns) + ".pt.trace.json" + (use_gzip ? ".gz" : "")));
  };
}

const Trace& CycleResult::trace() const {
  if (!trace_) {
    trace_ = std::make_shared<Trace>(export_ && export_->raw ? trace_from_result(*export_->raw) : Trace{});
    if (export_) trace_->profile_memory |= export_->profile_memory;
  }
  return *trace_;
}

// ------------------------------------------------------------------ Profiler
Profiler::Profiler(ProfilerOptions opts) : opts_(std::move(opts)) {
  opts_.schedule.validate();
  cuda_ = opts_.cuda && cuda_available();
}

Profiler::~Profiler() {
  if (!running_) return;
  try {
    stop();
  } catch (const std::exception& e) {
    log::error(std::string("profiler stop failed: ") + e.what());
  }
}

void Profiler::start() {
  if (running_) throw std::logic_error("Profiler::start called twice");
  running_ = true;
  step_num_ = 0;
  results_.why_empty_.clear();
  action_ = opts_.schedule(step_num_);
  apply(transition(ProfilerAction::None, action_), ProfilerAction::None, action_);
  open_step_scope();
}

void Profiler::step() {
  if (!running_) throw std::logic_error("Profiler::step called outside start()/stop()");
  close_step_scope();
  const ProfilerAction prev = action_;
  ++step_num_;
  action_ = opts_.schedule(step_num_);
  apply(transition(prev, action_), prev, action_);
  open_step_scope();
}

void Profiler::stop() {
  if (!running_) return;
  stopping_ = true;
  close_step_scope();
  apply(transition_on_exit(action_), action_, ProfilerAction::None);
  stopping_ = false;
  running_ = false;
  if (results_.empty()) {  // Python raises when asked to export; say it here, where it happened
    results_.why_empty_ = why_no_result();
    log::warn(results_.why_empty_);
  }
}

std::string Profiler::why_no_result() const {
  const Schedule& s = opts_.schedule;
  const int first_record = s.first_cycle_steps() - s.active;  // the first RECORD step
  const int calls = step_num_;
  return "no profiling cycle completed, so there is no result: the loop called step() " +
         std::to_string(calls) + " time" + (calls == 1 ? "" : "s") + ", and the schedule (" + s.str() +
         ") records from step " + std::to_string(first_record) + " on: step() must be called at least " +
         std::to_string(first_record) + " times for a result and " + std::to_string(s.first_cycle_steps()) +
         " times for a whole cycle; run more steps or shorten the schedule";
}

void Profiler::apply(const Transition& t, ProfilerAction prev, ProfilerAction next) {
  if (t.warn_incorrect)
    log::warn("Incorrect schedule: " + std::string(action_name(prev)) + " followed by " +
              std::string(action_name(next)));
  if (t.start_before_stop) {  // WARMUP -> NONE: Python starts and stops an empty trace
    if (t.start) enable();
    if (t.stop) disable_and_collect();
    pending_.reset();
    return;
  }
  if (t.stop) disable_and_collect();
  if (t.trace_ready && pending_) {
    results_.push_back(std::move(*pending_));
    pending_.reset();
    if (opts_.on_trace_ready) opts_.on_trace_ready(results_.back());
  }
  pending_.reset();  // a result without trace_ready (RECORD -> NONE) is dropped, as in Python
  if (t.prepare) prepare();
  if (t.start) enable();
}

namespace {
ti::ProfilerConfig make_config(const ProfilerOptions& o) {
  // with_stack as Python's with_stack=True plus _ExperimentalConfig(verbose=True): verbose is
  // what makes Kineto keep each op's stack on its event (and write it as the trace's "Call stack").
  ti::ExperimentalConfig experimental;
  experimental.verbose = o.with_stack;
  // Python: record_shapes |= with_flops (the formula reads the shapes).
  return ti::ProfilerConfig(ti::ProfilerState::KINETO, o.record_shapes || o.with_flops, o.profile_memory,
                            o.with_stack, o.with_flops,
                            /*with_modules=*/false, experimental);
}
std::set<ti::ActivityType> make_activities(bool cuda) {
  std::set<ti::ActivityType> a{ti::ActivityType::CPU};
  if (cuda) a.insert(ti::ActivityType::CUDA);
  return a;
}
}  // namespace

// The [snippet:...] regions are quoted by docs/profiler-in-cpp.md (tests/test_doc_snippets.cpp checks).
// [snippet:prepare-enable]
void Profiler::prepare() {
  park_unsaved_results();
  tp::prepareProfiler(make_config(opts_), make_activities(cuda_));
  prepared_ = true;
}

void Profiler::enable() {
  if (!prepared_) prepare();  // never enable an unprepared Kineto (segfault)
  tp::enableProfiler(make_config(opts_), make_activities(cuda_));
  // The trace's top-level flags, as torch.profiler writes them (readers, our table included,
  // decide the Input Shapes and FLOPs columns from them).
  if (opts_.record_shapes || opts_.with_flops) tp::addMetadataJson("record_shapes", "1");
  if (opts_.with_flops) tp::addMetadataJson("with_flops", "1");
  if (opts_.with_stack) tp::addMetadataJson("with_stack", "1");
  if (opts_.profile_memory) tp::addMetadataJson("profile_memory", "1");
  enabled_ = true;
  cycle_first_step_ = step_num_;
}
// [/snippet:prepare-enable]

void Profiler::disable_and_collect() {
  if (!enabled_) return;
  // [snippet:disable]
  // Flush the GPU first, so the kernels of the last step are in the result.
  if (cuda_) synchronize_device();
  std::shared_ptr<tp::ProfilerResult> raw = tp::disableProfiler();
  // [/snippet:disable]
  enabled_ = prepared_ = false;
  pending_ = std::make_unique<CycleResult>();
  pending_->cycle = static_cast<int>(results_.size());
  pending_->first_step = cycle_first_step_;
  pending_->last_step = last_closed_step_;
  pending_->whole_steps = std::max(0, last_closed_step_ - cycle_first_step_ + 1 - (stopping_ ? 1 : 0));
  pending_->export_ = std::make_shared<CycleResult::Export>();
  pending_->export_->raw = std::move(raw);
  pending_->export_->profile_memory = opts_.profile_memory;
  register_export(pending_->export_);
}

void Profiler::open_step_scope() {
  step_name_ = std::string(kStepPrefix) + std::to_string(step_num_);
  auto rf = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (rf->isActive()) {
    rf->before(step_name_);
    step_scope_ = std::move(rf);
  }
}

void Profiler::close_step_scope() {
  last_closed_step_ = step_num_;
  if (step_scope_) step_scope_->end();
  step_scope_.reset();
}

// ------------------------------------------------------------------ Annotation
Annotation::Annotation(std::string name) : name_(std::move(name)) {
  auto rf = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (rf->isActive()) {
    rf->before(name_);
    rf_ = std::move(rf);
  }
}

Annotation::~Annotation() {
  if (rf_) rf_->end();
}

// ------------------------------------------------------------------ result -> model
namespace {
Kind kind_of(uint8_t activity_type) {
  using A = libkineto::ActivityType;
  switch (static_cast<A>(activity_type)) {
    case A::CPU_OP: return Kind::CpuOp;
    case A::USER_ANNOTATION: return Kind::UserAnnotation;
    case A::GPU_USER_ANNOTATION: return Kind::GpuUserAnnotation;
    case A::GPU_MEMCPY: return Kind::Memcpy;
    case A::GPU_MEMSET: return Kind::Memset;
    case A::CONCURRENT_KERNEL: return Kind::Kernel;
    case A::CUDA_RUNTIME: return Kind::Runtime;
    case A::CUDA_DRIVER: return Kind::Driver;
    case A::CPU_INSTANT_EVENT: return Kind::Instant;
    default: return Kind::Other;
  }
}

// Kineto keeps kernel launch parameters in the activity's metadata JSON (a fragment of
// `"key": value` pairs). Best effort: a footprint we cannot parse is simply left out.
void fill_kernel_info(Event& e, const std::string& metadata) {
  if (metadata.empty()) return;
  auto j = nlohmann::json::parse("{" + metadata + "}", nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  KernelInfo k;
  auto num = [&](const char* key, auto& out) {
    if (auto it = j.find(key); it != j.end() && it->is_number()) out = it->get<std::decay_t<decltype(out)>>();
  };
  auto dim3 = [&](const char* key, std::array<int, 3>& out) {
    if (auto it = j.find(key); it != j.end() && it->is_array() && it->size() == 3)
      for (int i = 0; i < 3; ++i)
        if ((*it)[i].is_number_integer()) out[i] = (*it)[i].get<int>();
  };
  num("registers per thread", k.registers_per_thread);
  num("shared memory", k.shared_memory);
  num("blocks per SM", k.blocks_per_sm);
  num("warps per SM", k.warps_per_sm);
  dim3("grid", k.grid);
  dim3("block", k.block);
  if (k.registers_per_thread >= 0 || k.grid[0] > 0) e.kernel = k;
  num("bytes", e.bytes);
}
}  // namespace

Trace trace_from_result(const tp::ProfilerResult& result) {
  Trace t;
  t.source = "<profiler result>";
  t.base_ns = static_cast<int64_t>(result.trace_start_ns());
  t.events.reserve(result.events().size());
  for (const auto& ke : result.events()) {
    Event e;
    e.name = ke.name();
    e.kind = kind_of(ke.activityType());
    e.category = std::string(kind_name(e.kind));
    e.start_ns = static_cast<int64_t>(ke.startNs()) - t.base_ns;
    e.dur_ns = static_cast<int64_t>(ke.durationNs());
    e.is_async = ke.isAsync();
    e.id = static_cast<int64_t>(ke.correlationId());
    e.linked_id = static_cast<int64_t>(ke.linkedCorrelationId());
    e.sequence_nr = ke.sequenceNr();
    e.fwd_thread_id = static_cast<int64_t>(ke.fwdThreadId());
    if (e.on_device()) {
      e.pid = ke.deviceIndex();
      e.tid = ke.deviceResourceId();
      if (e.kind != Kind::GpuUserAnnotation) fill_kernel_info(e, ke.metadataJson());
      if (e.kind != Kind::Kernel) e.kernel.reset();
    } else {
      e.pid = ::getpid();
      e.tid = static_cast<int64_t>(ke.startThreadId());
      e.flops = static_cast<int64_t>(ke.flops());
      const auto shapes = ke.shapes();
      if (!shapes.empty()) {  // Python's str(input_shapes)
        e.input_shapes = "[";
        for (size_t i = 0; i < shapes.size(); ++i) {
          e.input_shapes += i ? ", [" : "[";
          for (size_t j = 0; j < shapes[i].size(); ++j)
            e.input_shapes += (j ? ", " : "") + std::to_string(shapes[i][j]);
          e.input_shapes += ']';
        }
        e.input_shapes += ']';
      }
    }
    if (e.kind == Kind::Instant && e.name == "[memory]") {  // profile_memory (the saved trace has more)
      MemoryRecord m;
      m.device_type = static_cast<int>(ke.deviceType());
      m.device_id = ke.deviceIndex();
      e.memory = m;
      e.bytes = ke.nBytes();
      t.profile_memory = true;
    }
    for (const std::string& frame : ke.stack())  // with_stack (Python keeps the same entries)
      if (keep_stack_entry(frame)) e.stack.push_back(frame);
    t.record_shapes |= !e.input_shapes.empty();
    t.with_flops |= e.flops > 0;  // ke.flops() is 0 unless with_flops was on
    t.with_stack |= !e.stack.empty();
    t.events.push_back(std::move(e));
  }
  return t;
}

}  // namespace wb
