// The launch census: CUPTI callbacks on the runtime and driver API domains, counted per step.
// See cupti_census.hpp for where it can run next to Kineto. The CUPTI part is compiled only
// when the build has CUPTI (WORKBOOK_HAVE_CUPTI); the naming/classification helpers always.
#include "workbook/stats.hpp"
#include "workbook/cupti_census.hpp"
#include "workbook/names.hpp"

#include <cmath>
#include <algorithm>
#include <atomic>
#include <mutex>

#ifdef WORKBOOK_HAVE_CUPTI
#include <cuda_runtime_api.h>
#include <cupti.h>
#endif

namespace wb {

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
bool is_runtime(std::string_view name) { return starts_with(name, "cuda"); }
}  // namespace

// ---- the census (CUPTI) ------------------------------------------------------------------

namespace {
// The census CUPTI reports to (one per process at most: CUPTI allows one subscriber). Every
// access to it and to its counts holds g_mu, so a callback still running on another thread
// while the census is destroyed sees g_active == nullptr instead of freed memory.
std::mutex g_mu;
LaunchCensus::State* g_active = nullptr;
}  // namespace

struct LaunchCensus::State {
  uint64_t generation = 0;  // tells one census from the next (see on_api_call)
  ApiCounts current, nested;
  std::vector<ApiCounts> steps;
#ifdef WORKBOOK_HAVE_CUPTI
  CUpti_SubscriberHandle subscriber = nullptr;
#endif
};

#ifdef WORKBOOK_HAVE_CUPTI
namespace {

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "CUPTI error " + std::to_string(r);
  return s;
}

// Runtime calls nest: cudaLaunchKernel calls the driver (and, on CUDA 13, an internal
// __cudaLaunchKernel). Only the outermost call is what the program asked for. The depth is per
// thread and per census: a thread that was inside a call when a census started or ended must
// not carry a stale depth into the next one.
struct Depth {
  uint64_t generation = 0;
  int runtime = 0;
};
thread_local Depth depth;
std::atomic<uint64_t> next_generation{1};

void CUPTIAPI on_api_call(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (!cb || !cb->functionName) return;
  std::lock_guard<std::mutex> lock(g_mu);
  auto* st = static_cast<LaunchCensus::State*>(userdata);
  if (!st || st != g_active) return;
  const bool enter = cb->callbackSite == CUPTI_API_ENTER;
  if (depth.generation != st->generation) depth = {st->generation, 0};
  bool outermost = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (!enter) {
      if (depth.runtime > 0) --depth.runtime;  // an exit whose enter came before this census
      return;
    }
    outermost = depth.runtime++ == 0;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (!enter) return;
    outermost = depth.runtime == 0;
  } else {
    return;
  }
  (outermost ? st->current : st->nested)[api_base_name(cb->functionName)]++;
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS)
    throw CensusError(CensusError::Code::Failed, std::string(what) + ": " + cupti_error(r));
}

}  // namespace

std::string LaunchCensus::unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it, so later CUDA calls do not report it as theirs
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  }
  if (n == 0) return "no CUDA device";
  return {};
}

LaunchCensus::LaunchCensus() : state_(std::make_unique<State>()) {
  state_->generation = next_generation++;
  if (std::string why = unavailable_reason(); !why.empty())
    throw CensusError(CensusError::Code::Unavailable, "launch census unavailable: " + why);

  // cuptiSubscribe_v2 names us and, on a conflict, tells who holds the subscription.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "workbook launch census";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder) - 1;
  const CUptiResult r = cuptiSubscribe_v2(&state_->subscriber, on_api_call, state_.get(), &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    const std::string who = holder[0] ? std::string(" (held by: ") + holder + ")" : std::string();
    throw CensusError(CensusError::Code::Conflict,
                      "launch census: CUPTI already has a subscriber" + who +
                          ". CUPTI allows one per process; LibTorch's profiler (Kineto) takes it when the "
                          "first profiler starts and keeps it, and Nsight tools take it too. Run the census "
                          "before any profiling in this process, or in a process of its own "
                          "(e.g. 05_compiled_addmm --census only).");
  }
  check(r, "cuptiSubscribe");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_active = state_.get();
  }
  try {
    check(cuptiEnableDomain(1, state_->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
          "cuptiEnableDomain(runtime)");
    check(cuptiEnableDomain(1, state_->subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(driver)");
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_active = nullptr;
    }
    cuptiUnsubscribe(state_->subscriber);
    throw;
  }
}

LaunchCensus::~LaunchCensus() {
  if (!state_ || !state_->subscriber) return;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_active == state_.get()) g_active = nullptr;
  }
  cuptiUnsubscribe(state_->subscriber);  // nothing here throws
}

#else  // no CUPTI in this build

std::string LaunchCensus::unavailable_reason() {
  return "this build has no CUPTI (a CPU-only LibTorch, or the CUDA toolkit's CUPTI was not found)";
}

LaunchCensus::LaunchCensus() : state_(std::make_unique<State>()) {
  throw CensusError(CensusError::Code::Unavailable, "launch census unavailable: " + unavailable_reason());
}

LaunchCensus::~LaunchCensus() = default;

#endif

void LaunchCensus::discard() {
  std::lock_guard<std::mutex> lock(g_mu);
  state_->current.clear();
}

void LaunchCensus::step() {
  std::lock_guard<std::mutex> lock(g_mu);
  state_->steps.push_back(std::move(state_->current));
  state_->current.clear();
}

std::vector<ApiCounts> LaunchCensus::steps() const {
  std::lock_guard<std::mutex> lock(g_mu);
  return state_->steps;
}

ApiCounts LaunchCensus::nested() const {
  std::lock_guard<std::mutex> lock(g_mu);
  return state_->nested;
}

// ---- naming and classes --------------------------------------------------------------------

std::string api_base_name(std::string_view name) {
  while (starts_with(name, "_")) name.remove_prefix(1);
  // Drop a version suffix "_v<digits>" (CUPTI's callback names carry one, Kineto's do not).
  const size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      std::all_of(name.begin() + v + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    name = name.substr(0, v);
  return std::string(name);
}

namespace {
constexpr EnumNames<ApiClass, ApiClass::Other> kApiClassNames{
    "kernel launches",   "graph launches",   "memcpy calls", "memset calls",
    "occupancy queries", "synchronizations", "other calls"};
}  // namespace

static_assert(kApiClassNames.kCount == kApiClassCount);

std::string_view api_class_name(ApiClass c) { return kApiClassNames.name(c); }

ApiClass classify_api(std::string_view raw) {
  const std::string name = api_base_name(raw);
  const std::string_view n = name;
  for (std::string_view p :
       {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel", "cuLaunchCooperativeKernel"})
    if (starts_with(n, p)) return ApiClass::KernelLaunch;
  if (starts_with(n, "cudaGraphLaunch") || starts_with(n, "cuGraphLaunch")) return ApiClass::GraphLaunch;
  if (starts_with(n, "cudaMemcpy") || starts_with(n, "cuMemcpy")) return ApiClass::Memcpy;
  if (starts_with(n, "cudaMemset") || starts_with(n, "cuMemset")) return ApiClass::Memset;
  if (contains(n, "Occupancy")) return ApiClass::Occupancy;
  if (ends_with(n, "Synchronize") || ends_with(n, "Synchronize_ptsz")) return ApiClass::Sync;
  return ApiClass::Other;
}

bool ClassCounts::operator==(const ClassCounts& o) const {
  return std::equal(std::begin(n), std::end(n), std::begin(o.n));
}

ClassCounts by_class(const ApiCounts& calls) {
  ClassCounts c;
  for (const auto& [name, k] : calls) c[classify_api(name)] += k;
  return c;
}

ApiCounts kineto_visible(const ApiCounts& calls) {
  ApiCounts out;
  for (const auto& [name, k] : calls)
    if (is_runtime(name) || classify_api(name) == ApiClass::KernelLaunch) out[name] += k;
  return out;
}

std::vector<ApiCounts> trace_api_counts(const TraceModel& m) {
  std::vector<ApiCounts> out(m.steps().size());
  std::map<int, size_t> slot;  // step number -> index in steps() (sorted by number)
  for (size_t k = 0; k < m.steps().size(); ++k) slot[m.steps()[k].number] = k;
  for (const Event& e : m.trace().events) {
    if (e.kind != Kind::Runtime && e.kind != Kind::Driver) continue;
    if (const StepWindow* s = m.step_at(e.start_ns)) out[slot.at(s->number)][api_base_name(e.name)]++;
  }
  return out;
}

namespace {
// Counts are whole numbers: wb::median (the workbook's one median), rounded down.
int64_t median_of(const std::vector<int64_t>& v) {
  return static_cast<int64_t>(std::floor(median(std::vector<double>(v.begin(), v.end()))));
}
}  // namespace

ClassCounts median_step(const std::vector<ApiCounts>& steps) {
  ClassCounts out;
  std::vector<ClassCounts> per;
  for (const auto& s : steps) per.push_back(by_class(s));
  for (int c = 0; c < kApiClassCount; ++c) {
    std::vector<int64_t> v;
    for (const auto& p : per) v.push_back(p.n[c]);
    out.n[c] = median_of(v);
  }
  return out;
}

int64_t median_calls(const std::vector<ApiCounts>& steps, const std::string& name) {
  std::vector<int64_t> v;
  for (const auto& s : steps) {
    auto it = s.find(name);
    v.push_back(it == s.end() ? 0 : it->second);
  }
  return median_of(v);
}

}  // namespace wb
