#include "workbook/trace_diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "workbook/rules.hpp"
#include "workbook/names.hpp"

namespace wb {

namespace {
constexpr EnumNames<DiffKind, DiffKind::Removed> kDiffKindNames{"same", "changed", "added", "removed"};
}  // namespace

std::string_view diff_kind_name(DiffKind k) { return kDiffKindNames.name(k); }

int TraceDiff::changes() const {
  int n = static_cast<int>(renamed.size());
  for (const auto* rows : {&ops, &kernels, &launches})
    for (const auto& r : *rows) n += r.kind != DiffKind::Same;
  return n;
}

namespace {

struct Tally {
  int64_t count = 0;
  int64_t ns = 0;
  KernelClass cls = KernelClass::Other;  // device work: by name, copies and memsets by kind
};

// Tallies by name, sorted by name (the rows' order before ranking). Names point into the trace.
using Tallies = std::vector<std::pair<std::string_view, Tally>>;

// What one trace holds per step: ops, kernels, launch calls by name, and each step's times.
struct Census {
  TraceSide side;
  Tallies ops, kernels, launches;
  int steps = 1;
};

// Counting goes through a hash map (a 100 MB trace has ~260k events and a few hundred names),
// then the names are sorted once.
Tallies sorted(std::unordered_map<std::string_view, Tally>&& by_name) {
  Tallies out(by_name.begin(), by_name.end());
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

Census take_census(const TraceModel& m) {
  Census c;
  const Trace& t = m.trace();
  c.side.source = t.source;
  const auto& windows = m.steps();
  // The step an event belongs to, by the CPU time it started at (device work: its launch's).
  auto step_of = [&](EventIdx i) -> int {
    if (windows.empty()) return 0;
    const Event& e = m.at(i);
    int64_t at = e.start_ns;
    if (e.on_device()) {
      if (auto l = m.launcher(i))
        at = m.at(*l).start_ns;
      else
        return -1;  // device work without a launch in the trace: not in any step
    }
    const StepWindow* w = m.step_at(at);
    if (!w) return -1;
    return static_cast<int>(w - windows.data());
  };
  c.steps = windows.empty() ? 1 : static_cast<int>(windows.size());
  c.side.steps.resize(static_cast<size_t>(c.steps));
  for (size_t s = 0; s < windows.size(); ++s) {
    c.side.steps[s].number = windows[s].number;
    c.side.steps[s].cpu_us = static_cast<double>(windows[s].end_ns - windows[s].start_ns) / 1e3;
  }
  if (windows.empty()) {  // the whole trace is one step: the CPU span of its ops
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Event& e : t.events)
      if (e.kind == Kind::CpuOp || e.kind == Kind::UserAnnotation) {
        lo = std::min(lo, e.start_ns);
        hi = std::max(hi, e.end_ns());
      }
    c.side.steps[0].cpu_us = hi > lo ? static_cast<double>(hi - lo) / 1e3 : 0;
  }
  std::unordered_map<std::string_view, Tally> ops, kernels, launches;
  for (EventIdx i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    std::unordered_map<std::string_view, Tally>* into = nullptr;
    const bool device_work = is_device_work(e);
    if (e.kind == Kind::CpuOp)
      into = &ops;
    else if (device_work)
      into = &kernels;
    else if (e.kind == Kind::Runtime || e.kind == Kind::Driver)
      into = &launches;
    if (!into) continue;
    const int s = step_of(i);
    if (s < 0) continue;
    Tally& tally = (*into)[e.name];
    tally.count += 1;
    tally.ns += e.dur_ns;
    if (into == &kernels) tally.cls = classify(e);
    if (device_work) c.side.steps[static_cast<size_t>(s)].gpu_us += static_cast<double>(e.dur_ns) / 1e3;
  }
  c.ops = sorted(std::move(ops));
  c.kernels = sorted(std::move(kernels));
  c.launches = sorted(std::move(launches));
  for (const auto& s : c.side.steps) {
    c.side.cpu_us_per_step += s.cpu_us / c.steps;
    c.side.gpu_us_per_step += s.gpu_us / c.steps;
  }
  return c;
}

std::vector<DiffRow> compare(const Tallies& a, int a_steps, const Tallies& b, int b_steps, bool kernels,
                             const DiffOptions& o) {
  std::vector<DiffRow> rows;
  rows.reserve(std::max(a.size(), b.size()));
  // A name in A (ta), in B (tb), or in both.
  auto add = [&](std::string_view name, const Tally* ta, const Tally* tb) {
    DiffRow r;
    r.name = std::string(name);
    const Tally& any = ta ? *ta : *tb;
    if (kernels) r.kernel_class = std::string(class_name(any.cls));
    if (ta) {
      r.a_per_step = static_cast<double>(ta->count) / a_steps;
      r.a_us_per_step = static_cast<double>(ta->ns) / 1e3 / a_steps;
    }
    if (tb) {
      r.b_per_step = static_cast<double>(tb->count) / b_steps;
      r.b_us_per_step = static_cast<double>(tb->ns) / 1e3 / b_steps;
    }
    r.kind = !ta                                                           ? DiffKind::Added
             : !tb                                                         ? DiffKind::Removed
             : std::fabs(r.a_per_step - r.b_per_step) >= o.count_tolerance ? DiffKind::Changed
                                                                           : DiffKind::Same;
    rows.push_back(std::move(r));
  };
  // A's names in order (with B's tally where B has it), then the names only B has, in order:
  // one merge over the two sorted lists.
  std::vector<const std::pair<std::string_view, Tally>*> only_b;
  size_t j = 0;
  for (const auto& [name, ta] : a) {
    while (j < b.size() && b[j].first < name) only_b.push_back(&b[j++]);
    const bool both = j < b.size() && b[j].first == name;
    add(name, &ta, both ? &b[j].second : nullptr);
    if (both) ++j;
  }
  for (; j < b.size(); ++j) only_b.push_back(&b[j]);
  for (const auto* nb : only_b) add(nb->first, nullptr, &nb->second);
  // Changes first (removed, added, changed), then the same; within each, the most time first.
  auto rank = [](DiffKind k) {
    return k == DiffKind::Removed ? 0 : k == DiffKind::Added ? 1 : k == DiffKind::Changed ? 2 : 3;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const DiffRow& x, const DiffRow& y) {
    if (rank(x.kind) != rank(y.kind)) return rank(x.kind) < rank(y.kind);
    return std::max(x.a_us_per_step, x.b_us_per_step) > std::max(y.a_us_per_step, y.b_us_per_step);
  });
  return rows;
}

// The rows on both sides with the largest change of time per step (|B - A|, then by name).
std::vector<DiffRow> largest_time_changes(const std::vector<DiffRow>& rows, int n) {
  std::vector<DiffRow> both;
  for (const auto& r : rows)
    // A change the text would print as 0.0 us is no change.
    if (r.a_per_step > 0 && r.b_per_step > 0 && std::fabs(r.b_us_per_step - r.a_us_per_step) >= 0.05)
      both.push_back(r);
  std::stable_sort(both.begin(), both.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::fabs(x.b_us_per_step - x.a_us_per_step) > std::fabs(y.b_us_per_step - y.a_us_per_step);
  });
  if (both.size() > static_cast<size_t>(std::max(0, n))) both.resize(static_cast<size_t>(std::max(0, n)));
  return both;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad(std::string s, size_t width) {  // left-aligned
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string count_text(double per_step) {
  return std::fabs(per_step - std::round(per_step)) < 1e-9 ? fmt("%.0f", per_step) : fmt("%.2f", per_step);
}

}  // namespace

TraceDiff diff_traces(const TraceModel& a, const TraceModel& b, const DiffOptions& o) {
  // The two censuses are independent: B's is taken on a second thread when both traces are big
  // enough for it to pay (tens of ms each on a 100 MB trace); one model against itself is counted
  // once.
  constexpr size_t kParallelEvents = 50'000;
  Census ca, cb;
  if (&a == &b) {
    ca = take_census(a);
    cb = ca;
  } else if (a.trace().events.size() >= kParallelEvents && b.trace().events.size() >= kParallelEvents) {
    auto other = std::async(std::launch::async, [&b] { return take_census(b); });
    ca = take_census(a);
    cb = other.get();
  } else {
    ca = take_census(a);
    cb = take_census(b);
  }
  TraceDiff d;
  d.a = ca.side;
  d.b = cb.side;
  d.ops = compare(ca.ops, ca.steps, cb.ops, cb.steps, false, o);
  d.kernels = compare(ca.kernels, ca.steps, cb.kernels, cb.steps, true, o);
  d.launches = compare(ca.launches, ca.steps, cb.launches, cb.steps, false, o);
  d.op_time_changes = largest_time_changes(d.ops, o.time_changes);
  d.kernel_time_changes = largest_time_changes(d.kernels, o.time_changes);
  // Kernel renames: a kernel only in A and one only in B, of the same class (not "other"),
  // paired in order of time.
  std::vector<const DiffRow*> gone, fresh;
  for (const auto& r : d.kernels) {
    if (r.kind == DiffKind::Removed) gone.push_back(&r);
    if (r.kind == DiffKind::Added) fresh.push_back(&r);
  }
  std::vector<bool> used(fresh.size(), false);
  for (const DiffRow* g : gone) {
    if (g->kernel_class == "other" || g->kernel_class == "memcpy" || g->kernel_class == "memset") continue;
    for (size_t j = 0; j < fresh.size(); ++j) {
      if (used[j] || fresh[j]->kernel_class != g->kernel_class) continue;
      used[j] = true;
      d.renamed.push_back(
          {g->kernel_class, g->name, fresh[j]->name, g->a_us_per_step, fresh[j]->b_us_per_step});
      break;
    }
  }
  return d;
}

namespace {

nlohmann::json row_json(const DiffRow& r) {
  nlohmann::json x = {{"name", r.name},
                      {"change", diff_kind_name(r.kind)},
                      {"a_per_step", r.a_per_step},
                      {"b_per_step", r.b_per_step},
                      {"a_us_per_step", r.a_us_per_step},
                      {"b_us_per_step", r.b_us_per_step}};
  if (!r.kernel_class.empty()) x["class"] = r.kernel_class;
  return x;
}

std::string render_json(const TraceDiff& d) {
  nlohmann::json j;
  auto side = [](const TraceSide& s) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& st : s.steps)
      steps.push_back({{"step", st.number}, {"cpu_us", st.cpu_us}, {"gpu_us", st.gpu_us}});
    return nlohmann::json{{"source", s.source},
                          {"cpu_us_per_step", s.cpu_us_per_step},
                          {"gpu_us_per_step", s.gpu_us_per_step},
                          {"steps", steps}};
  };
  j["a"] = side(d.a);
  j["b"] = side(d.b);
  auto rows = [](const std::vector<DiffRow>& rs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rs) out.push_back(row_json(r));
    return out;
  };
  j["ops"] = rows(d.ops);
  j["kernels"] = rows(d.kernels);
  j["launches"] = rows(d.launches);
  j["renamed_kernels"] = nlohmann::json::array();
  for (const auto& r : d.renamed)
    j["renamed_kernels"].push_back({{"class", r.kernel_class},
                                    {"a", r.a_name},
                                    {"b", r.b_name},
                                    {"a_us_per_step", r.a_us_per_step},
                                    {"b_us_per_step", r.b_us_per_step}});
  j["time_changes"] = {{"ops", rows(d.op_time_changes)}, {"kernels", rows(d.kernel_time_changes)}};
  j["changes"] = d.changes();
  return j.dump(1) + "\n";
}

std::string time_text(double us) {
  return std::fabs(us) >= 1000 ? fmt("%.2f ms", us / 1000) : fmt("%.1f us", us);
}

// The names whose time per step moved most (both sides have them), largest first.
void time_changes_text(std::ostringstream& out, const TraceDiff& d) {
  if (d.op_time_changes.empty() && d.kernel_time_changes.empty()) return;
  out << "\nlargest time changes per step (names on both sides), A -> B:\n";
  auto list = [&](const char* what, const std::vector<DiffRow>& rows) {
    for (const auto& r : rows) {
      const double delta = r.b_us_per_step - r.a_us_per_step;
      out << "  " << pad(what, 8) << pad(time_text(r.a_us_per_step) + " -> " + time_text(r.b_us_per_step), 22)
          << pad((delta >= 0 ? "+" : "-") + time_text(std::fabs(delta)), 11)
          << (r.a_us_per_step > 0 ? pad(fmt("(%+.0f%%)", delta * 100 / r.a_us_per_step), 8) : pad("", 8))
          << r.name << (r.kernel_class.empty() ? "" : " [" + r.kernel_class + "]") << "\n";
    }
  };
  list("op", d.op_time_changes);
  list("kernel", d.kernel_time_changes);
}

void section_text(std::ostringstream& out, const char* title, const std::vector<DiffRow>& rows,
                  const char* time_label, bool show_same) {
  int shown = 0;
  for (const auto& r : rows) shown += show_same || r.kind != DiffKind::Same;
  out << "\n" << title << ": ";
  if (shown == 0) {
    out << "the same names, the same counts per step\n";
    return;
  }
  out << "calls per step A -> B, " << time_label << " per step A -> B\n";
  for (const auto& r : rows) {
    if (!show_same && r.kind == DiffKind::Same) continue;
    const char* mark = r.kind == DiffKind::Removed   ? "-"
                       : r.kind == DiffKind::Added   ? "+"
                       : r.kind == DiffKind::Changed ? "~"
                                                     : "=";
    out << "  " << mark << " " << pad(std::string(diff_kind_name(r.kind)), 8) << " "
        << count_text(r.a_per_step) << " -> " << count_text(r.b_per_step) << "   "
        << fmt("%.1f", r.a_us_per_step) << " -> " << fmt("%.1f", r.b_us_per_step) << " us   " << r.name
        << (r.kernel_class.empty() ? "" : " [" + r.kernel_class + "]") << "\n";
  }
}

void steps_text(std::ostringstream& out, const TraceDiff& d) {
  const size_t n = std::max(d.a.steps.size(), d.b.steps.size());
  out << "\nsteps          A cpu us    B cpu us    A gpu us    B gpu us\n";
  const size_t kMaxRows = 12;
  for (size_t i = 0; i < n && i < kMaxRows; ++i) {
    auto cell = [&](const TraceSide& s, bool cpu) {
      return i < s.steps.size() ? fmt("%12.1f", cpu ? s.steps[i].cpu_us : s.steps[i].gpu_us)
                                : std::string(12, ' ');
    };
    const TraceSide& named = i < d.a.steps.size() ? d.a : d.b;
    const int num = named.steps[i].number;
    out << pad(num >= 0 ? "#" + std::to_string(num) : "all", 8) << cell(d.a, true) << cell(d.b, true)
        << cell(d.a, false) << cell(d.b, false) << "\n";
  }
  if (n > kMaxRows) out << "(" << n - kMaxRows << " more steps; --format json lists them all)\n";
}
}  // namespace

std::string render_diff(const TraceDiff& d, Format f, bool show_same) {
  if (f == Format::Json) return render_json(d);
  std::ostringstream out;
  out << "A: " << d.a.source << " (" << d.a.steps.size() << " step" << (d.a.steps.size() == 1 ? "" : "s")
      << ")\n"
      << "B: " << d.b.source << " (" << d.b.steps.size() << " step" << (d.b.steps.size() == 1 ? "" : "s")
      << ")\n\n";
  out << "per step (mean)            A            B        B - A\n";
  auto line = [&](const char* what, double a, double b) {
    out << pad(what, 18) << fmt("%10.1f us", a) << fmt("%10.1f us", b) << fmt("%+10.1f us", b - a)
        << (a > 0 ? fmt("  (%+.0f%%)", (b - a) * 100 / a) : "") << "\n";
  };
  line("CPU (step width)", d.a.cpu_us_per_step, d.b.cpu_us_per_step);
  line("GPU (device work)", d.a.gpu_us_per_step, d.b.gpu_us_per_step);
  section_text(out, "ops (CPU)", d.ops, "CPU time", show_same);
  section_text(out, "kernels (GPU)", d.kernels, "GPU time", show_same);
  section_text(out, "launch calls (CUDA runtime/driver)", d.launches, "CPU time", show_same);
  if (!d.renamed.empty()) {
    out << "\nkernel names that changed (same name = same GPU work; a new name is different GPU work,\n"
           "even for the same job: read its time again)\n";
    for (const auto& r : d.renamed)
      out << "  " << r.kernel_class << ": " << r.a_name << "\n    -> " << r.b_name << "\n"
          << "    " << fmt("%.1f", r.a_us_per_step) << " -> " << fmt("%.1f", r.b_us_per_step)
          << " us per step\n";
  }
  time_changes_text(out, d);
  steps_text(out, d);
  out << "\n" << d.changes() << " change" << (d.changes() == 1 ? "" : "s") << " in names or counts\n";
  return out.str();
}

}  // namespace wb
