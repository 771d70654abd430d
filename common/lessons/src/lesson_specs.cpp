// Patterns: how a fact is judged, and what each chapter expects to see.
//
// Tolerances are chosen from the original post's A100 figures and this workbook's H200 runs so
// that every pattern separates the case the chapter teaches from its opposite with margin on both
// sides. Each one says why, in words: an explanation quotes no measured figure (the measured value
// is the fact's own, printed next to it; tests/test_lessons.cpp checks this), only thresholds, the
// datasheet and the original post's A100.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <future>
#include <map>

#include "lessons_detail.hpp"
#include "workbook/lessons.hpp"
#include "workbook/rules.hpp"

namespace wb {

using nlohmann::json;
using Op = Condition::Op;
using Scope = Condition::Scope;

namespace {

std::string_view op_text(Op op) {
  switch (op) {
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Contains: return "contains";
    case Op::NotContains: return "does not contain";
  }
  return "?";
}

bool is_hopper(const Trace& t) {
  for (const auto& d : t.devices)
    if (d.compute_major == 9) return true;
  if (!t.devices.empty()) return false;
  // No deviceProperties: Hopper-only kernels name their architecture.
  for (const auto& e : t.events)
    if (e.kind == Kind::Kernel && e.name.find("sm90") != std::string::npos) return true;
  return false;
}

bool element_matches(const json& elem, const json& want) {
  if (elem.is_string() && want.is_string())
    return elem.get<std::string>().find(want.get<std::string>()) != std::string::npos;
  return elem == want;
}

bool holds(const json& have, Op op, const json& want) {
  switch (op) {
    case Op::Eq: return have == want;
    case Op::Ne: return have != want;
    case Op::Contains:
    case Op::NotContains: {
      bool found = false;
      if (have.is_array()) {
        for (const auto& e : have) found = found || element_matches(e, want);
      } else {
        found = element_matches(have, want);
      }
      return op == Op::Contains ? found : !found;
    }
    default: break;
  }
  if (!have.is_number() || !want.is_number()) return false;
  const double a = have.get<double>(), b = want.get<double>();
  switch (op) {
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: return false;
  }
}

// The first element (or the string itself) that matches `want`, shortened; "" if none.
std::string first_match(const json& have, const json& want) {
  auto cut = [](std::string s) { return s.size() > 100 ? s.substr(0, 97) + "..." : s; };
  if (!have.is_array()) return element_matches(have, want) ? cut(have.dump()) : "";
  for (const auto& e : have)
    if (element_matches(e, want)) return cut(e.is_string() ? e.get<std::string>() : e.dump());
  return "";
}

std::string show(const json& v) {
  std::string s = v.dump();
  constexpr size_t kMax = 80;  // a list of 20 paths does not belong on one line
  return s.size() > kMax ? s.substr(0, kMax - 3) + "..." : s;
}

// Why a condition does not apply to this run ("" when it does).
std::string out_of_scope(const Condition& c, bool gpu, bool hopper, const Problem& problem) {
  const std::string key = c.key.empty() || c.key[0] != '/' ? c.key : c.key.substr(1);
  if (c.scope == Scope::Gpu && !gpu) return key + " needs a GPU trace";
  // Hopper: work that ran on a Hopper GPU (a CPU run on a GPU machine still lists the GPU in
  // deviceProperties, but nothing ran there).
  if (c.scope == Scope::Hopper && !(gpu && hopper)) return key + " describes Hopper GPUs (H100/H200)";
  if (c.scope == Scope::Cpu && gpu) return key + " describes the CPU edition";
  if (c.only_n > 0 && problem.n > 0 && problem.n != c.only_n)
    return fmt::format("{} holds for N={} (this run: N={})", key, c.only_n, problem.n);
  return "";
}

}  // namespace

Fact apply_pattern(Fact f, const Pattern& p, const Trace& trace, const Problem& problem) {
  f.pattern = p;
  if (!f.measured) {
    f.status = Status::NotApplicable;
    f.verdict = "not applicable: " + f.explanation;
    return f;
  }
  // Each is a scan of the events: only when a condition is scoped.
  bool scoped_gpu = false, scoped_hopper = false;
  for (const auto& c : p.all) {
    // Cpu: "not a GPU run"; Hopper: "ran on a Hopper GPU" (both read gpu).
    scoped_gpu |= c.scope == Scope::Gpu || c.scope == Scope::Cpu || c.scope == Scope::Hopper;
    scoped_hopper |= c.scope == Scope::Hopper;
  }
  const bool gpu = scoped_gpu && trace.has_device_activity();
  const bool hopper = scoped_hopper && is_hopper(trace);
  std::vector<std::string> held, failed, skipped;
  for (const auto& c : p.all) {
    const std::string key = c.key.empty() || c.key[0] != '/' ? c.key : c.key.substr(1);
    if (std::string why = out_of_scope(c, gpu, hopper, problem); !why.empty()) {
      skipped.push_back(std::move(why));
      continue;
    }
    json have;
    try {
      const json::json_pointer ptr(c.key);
      if (f.data.contains(ptr)) have = f.data.at(ptr);
    } catch (const json::exception&) {
      failed.push_back(fmt::format("bad key '{}' in the pattern", c.key));
      continue;
    }
    const bool ok = !have.is_null() && holds(have, c.op, c.value);
    if (have.is_null()) {
      failed.push_back(fmt::format("{} was not measured", key));
    } else if (c.op == Op::Contains || c.op == Op::NotContains) {
      // A list of paths is too long for a verdict: name the element that decided it.
      const std::string hit = first_match(have, c.value);
      std::string line = hit.empty() ? fmt::format("no {} entry has {}", key, show(c.value))
                                     : fmt::format("{} has {} (in \"{}\")", key, show(c.value), hit);
      if (!ok) line += c.op == Op::Contains ? ", which it should" : ", which it should not";
      (ok ? held : failed).push_back(line);
    } else if (ok) {
      held.push_back(fmt::format("{} = {} {} {}", key, show(have), op_text(c.op), show(c.value)));
    } else {
      failed.push_back(fmt::format("{} = {}, expected {} {}", key, show(have), op_text(c.op), show(c.value)));
    }
  }
  if (held.empty() && failed.empty()) {
    f.status = Status::NotApplicable;
    f.verdict = "not applicable: " + lessons_detail::join(skipped, "; ", "the pattern is empty");
  } else {
    f.status = failed.empty() ? Status::Pass : Status::Fail;
    f.verdict = lessons_detail::join(failed.empty() ? held : failed, "; ", "");
  }
  return f;
}

// ---- chapter specs -------------------------------------------------------------------------
namespace {

Condition C(std::string key, Op op, json v, Scope s = Scope::Any, int64_t only_n = 0) {
  Condition c;
  c.key = std::move(key);
  c.op = op;
  c.value = std::move(v);
  c.scope = s;
  c.only_n = only_n;
  return c;
}

constexpr auto Gpu = Scope::Gpu;
constexpr auto Hopper = Scope::Hopper;

// ---- Part 2: 06 nn.Linear, 07 GeGLU MLP ------------------------------------------------------
// Problems: 06 is Linear(32, 64) on 1024 rows (m=1024, k=32, n=64); 07 is the GeGLU MLP on
// 64*128 = 8192 tokens, dim 768, hidden 3072 (m=8192, k=768, n=3072). The CPU editions run
// smaller; conditions that hold only at the GPU size say so with only_n.
void add_part2_specs(std::vector<LessonSpec>& specs) {
  const Problem linear{64, 1, 2, 1024, 32};
  // LibTorch's torch::nn::Linear calls torch::addmm / matmul itself (torch/nn/functional/linear.h),
  // so a C++ trace has no aten::linear row above the chain Python's nn.Linear shows.
  specs.push_back(
      {"06_linear/eager",
       "nn.Linear with bias: one addmm, the bias in the epilogue",
       linear,
       {
           {"dispatch_chain",
            {"aten::t > aten::transpose > aten::as_strided (the weight's transpose), then aten::addmm",
             "the transpose is a view and the bias goes to addmm: no matmul, no add. (Python's trace "
             "nests both under aten::linear; LibTorch's nn::Linear makes the calls itself)",
             {C("/paths", Op::Contains, "aten::t > aten::transpose > aten::as_strided"),
              C("/paths", Op::Contains, "aten::addmm"), C("/paths", Op::NotContains, "aten::matmul"),
              C("/reaches_device", Op::Eq, true, Gpu)}}},
           {"work_per_step",
            {"one addmm and no aten::add per step; on a GPU exactly one kernel, a GEMM, and no copy",
             "the bias add runs in the GEMM's epilogue (the last step before the tile is written); "
             "chapter 05's addmm with a full-size b copied it into the output first (Memcpy DtoD)",
             {C("/ops/aten::addmm", Op::Eq, 1), C("/ops/aten::add", Op::Eq, 0),
              C("/kernels_per_step", Op::Eq, 1, Gpu), C("/gemm_kernels_per_step", Op::Eq, 1, Gpu),
              C("/memcpys_per_step", Op::Eq, 0, Gpu)}}},
           {"view_ops",
            {"aten::t runs every step and launches nothing: zero device time",
             "t is a view: it swaps two strides on the CPU and has no CUDA time at all",
             {C("/view_ops", Op::Contains, "aten::t"), C("/view_kernels", Op::Eq, 0),
              C("/view_device_us", Op::Eq, 0, Gpu)}}},
           {"launch_path",
            {"Hopper: the GEMM's name carries _bias_ and it goes out through cuLaunchKernelEx",
             "on the H200 an nvjet ..._bz_bias_TNT kernel; Part 1's matmul was ..._bz_NNT and its addmm "
             "..._badd_...",
             {C("/gemm_kernels", Op::Contains, "_bias_", Hopper),
              C("/gemm_launchers", Op::Contains, "cuLaunchKernelEx", Hopper)}}},
       }});
  specs.push_back(
      {"06_linear/no_bias",
       "nn.Linear without bias: mm, no epilogue",
       linear,
       {
           {"dispatch_chain",
            {"aten::matmul > aten::mm, and no addmm",
             "without a bias there is nothing for an epilogue to add: nn::Linear calls matmul, which calls "
             "mm",
             {C("/paths", Op::Contains, "aten::matmul > aten::mm"),
              C("/paths", Op::NotContains, "aten::addmm")}}},
           {"work_per_step",
            {"one mm, no addmm; on a GPU one GEMM kernel",
             "the same product without the bias",
             {C("/ops/aten::mm", Op::Eq, 1), C("/ops/aten::addmm", Op::Eq, 0),
              C("/kernels_per_step", Op::Eq, 1, Gpu)}}},
           {"launch_path",
            {"Hopper: another kernel name, without _bias_",
             "the name is the dispatcher's choice made visible: a different suffix, a different branch",
             {C("/gemm_kernels", Op::NotContains, "_bias_", Hopper),
              C("/gemm_kernels", Op::Contains, "_bz_", Hopper)}}},
       }});
  specs.push_back(
      {"06_linear/aoti",
       "nn.Linear compiled (AOTInductor): the view chain is gone",
       linear,
       {
           {"work_per_step",
            {"no aten::t (no view chain) on the CPU lane; on a GPU still one GEMM kernel",
             "Inductor fixed the strides at compile time and calls the addmm shim directly",
             {C("/steps", Op::Ge, 1), C("/ops/aten::t", Op::Eq, 0), C("/ops/aten::matmul", Op::Eq, 0),
              C("/kernels_per_step", Op::Eq, 1, Gpu), C("/gemm_kernels_per_step", Op::Eq, 1, Gpu)}}},
           {"launch_path",
            {"Hopper: the same _bias_ GEMM as eager",
             "one GEMM leaves nothing to fuse: the compiler picks the kernel eager already used",
             {C("/gemm_kernels", Op::Contains, "_bias_", Hopper)}}},
       }});

  const Problem mlp{3072, 1, 2, 8192, 768};
  constexpr int64_t kHidden = 3072;  // the GPU edition's hidden size (only_n)
  auto tiles = [&](double min_pct) {
    return Expectation{
        "gemm_tiles",
        {"two GEMM kernels: gate and up share one (2 per step), down gets another (1 per step); "
         "each >= " +
             fmt::format("{:.0f}", min_pct) + "% of peak on Hopper",
         "same 38.7 GFLOP each, but down's output is 768 wide and its reduction 3072 deep, so cuBLAS "
         "picks another tile (the original post's A100: 0.19 vs 0.17 ms). The H200 recordings run well "
         "above the floor; the floor still fails a GEMM off the tensor cores (fp32 runs at a few "
         "percent of the bf16 peak)",
         {C("/distinct_kernels", Op::Eq, 2, Gpu, kHidden),
          C("/per_step_counts", Op::Eq, json::array({2.0, 1.0}), Gpu, kHidden),
          C("/min_pct_of_peak", Op::Ge, min_pct, Hopper, kHidden)}}};
  };
  auto views =
      Expectation{"view_ops",
                  {"the metadata ops (t, transpose, reshape, view, _unsafe_view, as_strided) launch nothing",
                   "several view rows per linear, none with CUDA time; only mm reaches the GPU",
                   {C("/view_ops", Op::Contains, "aten::_unsafe_view"), C("/view_kernels", Op::Eq, 0),
                    C("/view_device_us", Op::Eq, 0, Gpu)}}};
  specs.push_back(
      {"07_geglu_mlp/eager",
       "GeGLU MLP, eager: 3 GEMMs + gelu + mul",
       mlp,
       {
           {"work_per_step",
            {"5 kernels per forward: 3 GEMMs (aten::mm), a gelu and a mul",
             "guess first: three linears and two pointwise ops; the H200 probe shows 15 kernels in 3 "
             "steps (+2 cuBLAS workspace memsets per step, not kernels)",
             {C("/ops/aten::mm", Op::Eq, 3), C("/ops/aten::gelu", Op::Eq, 1), C("/ops/aten::mul", Op::Eq, 1),
              C("/kernels_per_step", Op::Eq, 5, Gpu), C("/gemm_kernels_per_step", Op::Eq, 3, Gpu),
              C("/elementwise_kernels_per_step", Op::Eq, 2, Gpu)}}},
           views,
           {"dispatch_chain",
            {"a 3-D input: aten::matmul > aten::mm (no bias: mm, not addmm)",
             "matmul folds batch and sequence into 8192 rows (reshape/view), multiplies, and views back "
             "(_unsafe_view); Python nests this under aten::linear, LibTorch's nn::Linear calls matmul "
             "itself",
             {C("/paths", Op::Contains, "aten::matmul > aten::mm"),
              C("/paths", Op::Contains, "aten::matmul > aten::reshape > aten::view"),
              C("/paths", Op::Contains, "aten::matmul > aten::_unsafe_view"),
              C("/paths", Op::NotContains, "aten::addmm")}}},
           tiles(40),
           {"pointwise_traffic",
            {"gelu and mul move 5 intermediates (g -> h, h and u -> y) and run at >= 50% of HBM bandwidth",
             "[8192, 3072] bf16 = 50.3 MB each: 252 MB per step; eager's pointwise kernels run close to the "
             "memory's speed, so the floor sits well below them",
             {C("/traffic_in_intermediates", Op::Eq, 5.0, Gpu),
              C("/pointwise_kernels_per_step", Op::Eq, 2.0, Gpu), C("/unknown_kernels", Op::Eq, 0, Gpu),
              C("/pct_of_hbm", Op::Ge, 50, Hopper, kHidden)}}},
       }});
  specs.push_back(
      {"07_geglu_mlp/aoti",
       "GeGLU MLP, AOTInductor: gelu and mul fused into one Triton kernel",
       mlp,
       {
           {"work_per_step",
            {"4 kernels per forward: the same 3 GEMMs and one fused triton_poi_..gelu..mul.. kernel; "
             "no aten::matmul, aten::gelu or aten::mul on the CPU lane",
             "Inductor fuses pointwise ops that follow each other and leaves the GEMMs to cuBLAS",
             {C("/steps", Op::Ge, 1), C("/ops/aten::matmul", Op::Eq, 0), C("/ops/aten::gelu", Op::Eq, 0),
              C("/ops/aten::mul", Op::Eq, 0), C("/kernels_per_step", Op::Eq, 4, Gpu),
              C("/gemm_kernels_per_step", Op::Eq, 3, Gpu), C("/elementwise_kernels_per_step", Op::Eq, 1, Gpu),
              C("/kernel_names", Op::Contains, "triton_poi_fused", Gpu)}}},
           tiles(40),
           {"pointwise_traffic",
            {"the fused kernel moves 3 intermediates (reads g and u, writes y) at >= 40% of HBM bandwidth",
             "151 MB instead of 252: one 50 MB round trip gone. The AOTI package's kernel is slower under "
             "the "
             "profiler than in bench/bench_geglu (docs/performance.md); the floor leaves room for that and "
             "still fails a kernel that moves its bytes at a third of the memory's speed",
             {C("/traffic_in_intermediates", Op::Eq, 3.0, Gpu),
              C("/pointwise_kernels_per_step", Op::Eq, 1.0, Gpu),
              C("/pct_of_hbm", Op::Ge, 40, Hopper, kHidden)}}},
       }});
  specs.push_back(
      {"07_geglu_mlp/handwritten",
       "GeGLU MLP with a hand-written fused gelu*mul CUDA kernel",
       mlp,
       {
           {"work_per_step",
            {"4 kernels per forward: 3 GEMMs and this workbook's geglu kernel; no aten::gelu or aten::mul",
             "the same fusion as Inductor's, written by hand and launched from C++",
             {C("/ops/aten::mm", Op::Eq, 3), C("/ops/aten::gelu", Op::Eq, 0), C("/ops/aten::mul", Op::Eq, 0),
              C("/kernels_per_step", Op::Eq, 4, Gpu), C("/elementwise_kernels_per_step", Op::Eq, 1, Gpu),
              C("/kernel_names", Op::Contains, "geglu", Gpu)}}},
           views,
           tiles(40),
           {"pointwise_traffic",
            {"the hand-written kernel moves 3 intermediates at >= 60% of HBM bandwidth",
             "16-byte loads and enough bytes in flight: its goal is >= 85% of a measured copy "
             "(bench/bench_geglu, docs/performance.md). The floor leaves room for the profiler and clocks "
             "and fails a kernel no faster than eager's pair",
             {C("/traffic_in_intermediates", Op::Eq, 3.0, Gpu),
              C("/pointwise_kernels_per_step", Op::Eq, 1.0, Gpu),
              C("/pct_of_hbm", Op::Ge, 60, Hopper, kHidden)}}},
       }});
}

std::vector<LessonSpec> build_specs() {
  std::vector<LessonSpec> specs;

  // ---- 01: cold 64x64 ---------------------------------------------------------------------
  // The default run (schedule 1,1,3, nothing before it): the schedule's wait and warmup steps run
  // the workload twice before recording, so the one-time work of a first call is already done
  // when the window opens. What is left in the first recorded step is the profiler's own start-up.
  specs.push_back(
      {"01_cold_64",
       "Cold 64x64: reading the table and the trace",
       {64, 1, 2},
       {
           {"overhead_bound",
            {"overhead-bound: Self CUDA total < 0.1 x Self CPU total, GPU busy < 20% of the window",
             "at 64x64 the GPU works a few us per step while the CPU spends tens of us issuing it "
             "(a ratio of a few hundredths; the original post's A100: ~0.01); at 4096 the GPU's time is "
             "of the order of the CPU's, so 0.1 separates the two with margin on both sides",
             {C("/cuda_cpu_ratio", Op::Lt, 0.1, Gpu, 64), C("/gpu_busy_fraction", Op::Lt, 0.2, Gpu, 64)}}},
           {"profiler_artefacts",
            {"the window holds no one-time library work: the schedule's wait/warmup steps already paid it",
             "module loading, cudaFuncSetAttribute and the first GEMM's occupancy sizing happen in the "
             "first call of the process, here ProfilerStep#0 (wait), which is not recorded; compare the "
             "truly cold run (--experiment cold), where they fill the first recorded step",
             {C("/library_events", Op::Eq, 0, Gpu)}}},
           {"step_widths",
            {"the first recorded step is still the widest (>= 1.5 x the others): the profiler's own "
             "start-up, not one-time library work",
             "warm windows (this one, chapter 02's) show a first step a few times the others with no "
             "one-time event in it; a truly cold window is hundreds of times wider. On a CPU the extra "
             "cost is small and noisy, so there it is reported, not judged",
             {C("/first_is_widest", Op::Eq, true, Gpu), C("/first_over_median_rest", Op::Ge, 1.5, Gpu)}}},
           {"dead_window",
            {"the first recorded matmul_add waits before its first op (>= 1.5 x the later gaps): the "
             "profiler's start-up again",
             "warm windows show a first gap of tens of us against about one us later; the truly cold "
             "window's "
             "first gap is several times longer still",
             {C("/first_over_median_later", Op::Ge, 1.5)}}},
           {"dispatch_chain",
            {"matmul_add > aten::matmul > aten::mm, and on a GPU down to a kernel",
             "2-D inputs dispatch matmul to mm; a batched input would show bmm instead",
             {C("/paths", Op::Contains, "matmul_add > aten::matmul > aten::mm"),
              C("/paths", Op::NotContains, "aten::bmm"), C("/reaches_device", Op::Eq, true, Gpu)}}},
           {"launch_path",
            {"the add goes out through cudaLaunchKernel with no occupancy query; on Hopper the GEMM "
             "(nvjet ..._bz_...) through cuLaunchKernelEx, also without one",
             "light kernels never size themselves at run time; once warm, Hopper's cuBLASLt GEMMs skip "
             "the query too (the original post's A100 showed cudaOccupancyMaxActiveBlocksPerMultiprocessor "
             "every call)",
             {C("/elementwise_launchers", Op::Contains, "cudaLaunchKernel", Gpu),
              C("/elementwise_occupancy_queries", Op::Eq, 0, Gpu),
              C("/gemm_launchers", Op::Contains, "cuLaunchKernelEx", Hopper),
              C("/gemm_occupancy_queries", Op::Eq, 0, Hopper),
              C("/gemm_kernels", Op::Contains, "_bz_", Hopper)}}},
           {"kernel_footprint",
            {"heavy GEMM vs light add: >= 2x the registers, >= 16 KiB shared memory vs none; "
             "H200 tile at 64: grid [4,2,1], block [384,1,1]",
             "the H200's 64x64 GEMM uses well over a hundred registers per thread and over 100 KB of "
             "shared memory; the add a few dozen registers and none (the original post's A100: 32)",
             {C("/gemm_over_elementwise_registers", Op::Ge, 2, Gpu),
              C("/gemm/shared_memory", Op::Ge, 16384, Gpu), C("/elementwise/shared_memory", Op::Eq, 0, Gpu),
              C("/gemm/grid", Op::Eq, json::array({4, 2, 1}), Hopper, 64),
              C("/gemm/block", Op::Eq, json::array({384, 1, 1}), Hopper, 64)}}},
           {"launch_latency",
            {"the GPU keeps up: the last step's shortest launch-to-start wait < 2x the first step's",
             "at 64 the wait stays near ten us in every step (last/first about 1); at 4096 it grows "
             "more than tenfold as the queue fills (chapter 04)",
             {C("/growth", Op::Lt, 2, Gpu, 64)}}},
           {"end_sync",
            {"the final cudaDeviceSynchronize waits on an idle GPU: busy < 50% of it",
             "at 64 the GPU finished its few us of work long before the sync; the original post's A100 "
             "showed a 1.78 ms sync over 26 us of work",
             {C("/busy_during_sync_fraction", Op::Lt, 0.5, Gpu, 64)}}},
           {"throughput",
            {"a 64x64 GEMM uses a sliver of the chip: < 5% of peak (and no more than the datasheet allows)",
             "2*64^3 flop in a few us is a few hundredths of a percent of 989 TFLOP/s",
             {C("/gemm_pct_of_peak", Op::Lt, 5, Gpu, 64), C("/gemm_pct_of_peak", Op::Le, 105, Gpu)}}},
       }});
  // --experiment cold (schedule 0,0,3): the process's first calls inside the window.
  specs.push_back(
      {"01_cold_64/cold",
       "Truly cold: the process's first calls, recorded",
       {64, 1, 2},
       {
           {"profiler_artefacts",
            {"the first recorded step holds the one-time work: >= 10 library events, module loading "
             "among them, and the profiler's own Activity Buffer Request",
             "a first call loads kernel modules, sets function attributes, reads device attributes and "
             "sizes the GEMM; a warm window (chapter 02) has none of it",
             {C("/library_events", Op::Ge, 10, Gpu),
              C("/library_names", Op::Contains, "Runtime Triggered Module Loading", Gpu),
              C("/activity_buffer_requests", Op::Ge, 1, Gpu)}}},
           {"launch_path",
            {"Hopper: the process's first GEMM queries occupancy before its launch",
             "the warm H200 shows no query (chapter 02); the first call sizes the launch once",
             {C("/gemm_occupancy_queries", Op::Ge, 1, Hopper)}}},
           {"step_widths",
            {"the first recorded step is hundreds of times the others (>= 200x)",
             "one-time work costs ms against a warm step of tens of us; the profiler's start-up alone "
             "(chapter 02's --experiment profiler_startup) stays well under 200x",
             {C("/first_over_median_rest", Op::Ge, 200, Gpu)}}},
           {"dispatch_chain",
            {"the chain is the same as warm: matmul_add > aten::matmul > aten::mm",
             "cold or warm, the same ops run; only their first call costs more",
             {C("/paths", Op::Contains, "matmul_add > aten::matmul > aten::mm")}}},
       }});

  // ---- 02: warmup ---------------------------------------------------------------------------
  specs.push_back(
      {"02_warmup",
       "Warmup: keeping one-time costs out of the profile",
       {64, 1, 2},
       {
           {"profiler_artefacts",
            {"warm: no module loading, attribute setup or profiler buffer requests in the window",
             "warm-up iterations run the first-call work before the profiler starts, and the schedule's "
             "warmup step absorbs the profiler's buffer request; chapter 01's cold run shows dozens",
             {C("/count", Op::Eq, 0, Gpu)}}},
           {"step_widths",
            {"no step is more than 5x the median of the others (12x on a CPU)",
             "a warm window's first step is a few times the others (the profiler's start-up); a truly "
             "cold first step carries ms of setup (hundreds of times on a GPU). A CPU's cold first step "
             "is a few tens of times the others, and a warm one on a loaded 2-core machine can pass 5x, "
             "so on a CPU the bound sits between the two",
             {C("/first_over_median_rest", Op::Lt, 5, Gpu),
              C("/first_over_median_rest", Op::Lt, 12, Scope::Cpu)}}},
           {"overhead_bound",
            {"still overhead-bound: warmup removes one-time costs, not per-call overhead",
             "the warm 64x64 ratio is as small as the cold one's",
             {C("/cuda_cpu_ratio", Op::Lt, 0.1, Gpu, 64)}}},
           {"launch_path",
            {"Hopper: warm GEMMs go out through cuLaunchKernelEx without an occupancy query",
             "the H200 shows the occupancy queries only on the very first GEMM of a process",
             {C("/gemm_launchers", Op::Contains, "cuLaunchKernelEx", Hopper),
              C("/gemm_occupancy_queries", Op::Eq, 0, Hopper)}}},
           {"launch_latency",
            {"the GPU trails the CPU by a launch, not by a queue: the last step's shortest "
             "launch-to-start wait < 2x the first step's",
             "at 64 the wait stays near ten us (no A100-style 2.5 ms offset); at 4096 it grows tenfold",
             {C("/growth", Op::Lt, 2, Gpu, 64)}}},
       }});
  // --experiment profiler_startup (schedule 0,0,20 after the warm-up): the library is warm, the
  // profiler is not.
  specs.push_back(
      {"02_warmup/profiler_startup",
       "The profiler's own start-up, in a warm process",
       {64, 1, 2},
       {
           {"profiler_artefacts",
            {"the profiler's start-up is in the window (Activity Buffer Request), the libraries' one-time "
             "work is not",
             "the warm-up iterations paid the first-call work; with no schedule warmup step, the "
             "profiler's buffer request lands in the first recorded step",
             {C("/activity_buffer_requests", Op::Ge, 1, Gpu), C("/library_events", Op::Eq, 0, Gpu)}}},
           {"step_widths",
            {"only the first recorded step pays it: >= 5x the median of the other 19",
             "the buffer request costs ms in step 0; the other steps are warm",
             {C("/first_is_widest", Op::Eq, true, Gpu), C("/first_over_median_rest", Op::Ge, 5, Gpu)}}},
           {"kernel_gaps",
            {"the GPU's longest idle gap between two kernels of a step is in the first step, >= 2x any "
             "later step's",
             "the original post saw a buffer request open a gap inside one step; over 20 steps it shows "
             "once, in the step where the profiler starts, while the later steps' gaps are the CPU's "
             "launch pace (about ten us at 64)",
             {C("/widest_is_first", Op::Eq, true, Gpu), C("/first_over_max_rest", Op::Ge, 2, Gpu)}}},
           {"overhead_bound",
            {"still overhead-bound over the 20 steps",
             "per-call overhead does not change with the window's length",
             {C("/cuda_cpu_ratio", Op::Lt, 0.1, Gpu, 64)}}},
           {"dead_window",
            {"the first step's first op starts late (>= 1.5 x the later gaps)",
             "the profiler's start-up delays the first op of the window",
             {C("/first_over_median_later", Op::Ge, 1.5)}}},
       }});

  // ---- 03: batched bmm ----------------------------------------------------------------------
  specs.push_back(
      {"03_batched_bmm",
       "Batched (8, N, N): matmul dispatches bmm",
       {64, 8, 2},
       {
           {"dispatch_chain",
            {"batched input: aten::matmul dispatches aten::bmm, not aten::mm",
             "(8, N, N) inputs make matmul reshape/expand and call bmm; 2-D inputs call mm",
             {C("/paths", Op::Contains, "aten::matmul > aten::bmm"),
              C("/paths", Op::NotContains, "aten::matmul > aten::mm"),
              C("/reaches_device", Op::Eq, true, Gpu)}}},
           {"batch_chain",
            {"against the 2-D run: mm becomes bmm, >= 2x the CPU ops, longer outside the GEMM op; on a "
             "GPU one launch per step whose grid has >= batch/2 x the 2-D blocks",
             "the batch axis adds expand/reshape/_unsafe_view around one bmm; one launch covers all B "
             "matrices (the H200's grid [4,16,1] vs [4,2,1] at 64)",
             {C("/flat/gemm_op", Op::Eq, "aten::mm"), C("/batched/gemm_op", Op::Eq, "aten::bmm"),
              C("/ops_ratio", Op::Ge, 2), C("/outside_gemm_extra_us", Op::Gt, 0),
              C("/batched/gemm_kernels_per_step", Op::Eq, 1, Gpu), C("/blocks_ratio", Op::Ge, 4, Gpu)}}},
           {"kernel_footprint",
            {"Hopper: the batched GEMM's grid is [4,16,1], 8x the 2-D [4,2,1]",
             "one launch covers every matrix",
             {C("/gemm/grid", Op::Eq, json::array({4, 16, 1}), Hopper, 64)}}},
           {"overhead_bound",
            {"still overhead-bound: 8 tiny GEMMs are still tiny",
             "the batched GEMM at 64 is a few us of GPU work per window against hundreds of us of CPU",
             {C("/cuda_cpu_ratio", Op::Lt, 0.1, Gpu, 64)}}},
       },
       2});

  // ---- 04: compute-bound 4096 ---------------------------------------------------------------
  const Expectation cpu_compute_bound{
      "cpu_shares",
      {"CPU edition: compute-bound on the CPU too: the step outside aten::mm and aten::add < 2%",
       "at 1024 on a CPU the multiply takes ms and the rest of the step a few us; at 64 the rest "
       "is a visible share (the overhead-bound case of chapter 01)",
       {C("/overhead_share", Op::Lt, 0.02, Scope::Cpu)}}};
  specs.push_back(
      {"04_compute_bound_4096",
       "4096x4096: compute-bound, and variance",
       {4096, 1, 2},
       {
           {"overhead_bound",
            {"compute-bound: Self CUDA total >= 0.5 x Self CPU total, GPU busy >= 50% of the window",
             "at 4096 the GPU's time is of the order of the CPU's (the original post's A100: 0.92, 4.5 vs "
             "4.9 ms); a 64x64 run sits two orders of magnitude lower",
             {C("/cuda_cpu_ratio", Op::Ge, 0.5, Gpu, 4096),
              C("/gpu_busy_fraction", Op::Ge, 0.5, Gpu, 4096)}}},
           {"kernel_durations",
            {"the GEMM dominates device time (>= 75%), with a distribution of >= 3 samples",
             "at 4096 the GEMM is most of each step's device time, the add most of the rest",
             {C("/gemm_share", Op::Ge, 0.75, Gpu, 4096), C("/gemm/count", Op::Ge, 3, Gpu)}}},
           {"launch_latency",
            {"the CPU runs ahead: the shortest launch-to-start wait grows >= 3x over the steps",
             "on the H200 it grows more than tenfold as the queue fills; at 64 it stays flat",
             {C("/growth", Op::Ge, 3, Gpu, 4096)}}},
           {"end_sync",
            {"the final sync waits on real work: the GPU is busy >= 50% of it",
             "the queued GEMMs and adds drain while the CPU waits",
             {C("/busy_during_sync_fraction", Op::Ge, 0.5, Gpu, 4096)}}},
           {"throughput",
            {"near the chip's limits: GEMM >= 40% of bf16 peak, the add >= 40% of memory bandwidth, "
             "and neither above 105% of the datasheet (a figure above it means wrong napkin math)",
             "the H200 reaches about four fifths of 989 TFLOP/s and nine tenths of 4.8 TB/s; 40% leaves "
             "room for clocks and shared machines",
             {C("/gemm_pct_of_peak", Op::Ge, 40, Gpu, 4096), C("/gemm_pct_of_peak", Op::Le, 105, Gpu),
              C("/elementwise_pct_of_peak", Op::Ge, 40, Gpu, 4096),
              C("/elementwise_pct_of_peak", Op::Le, 105, Gpu)}}},
           {"copies_next_to_launch",
            {"Hopper at 4096: cuBLAS sets its workspace (a Memset) before each GEMM",
             "the H200 shows a sub-us Memset (Device) from cudaMemsetAsync before every 4096 GEMM",
             {C("/memset_before_gemm", Op::Ge, 1, Hopper, 4096)}}},
           cpu_compute_bound,
       }});
  // --experiment distribution (schedule 0,0,20): twenty samples of the same GEMM.
  specs.push_back(
      {"04_compute_bound_4096/distribution",
       "Twenty GEMMs: a distribution, not a mean",
       {4096, 1, 2},
       {
           {"kernel_durations",
            {"twenty samples of the GEMM (>= 20), still >= 75% of device time",
             "one sample per step: read min, median and the outliers, not only the mean",
             {C("/gemm/count", Op::Ge, 20, Gpu), C("/gemm_share", Op::Ge, 0.75, Gpu, 4096)}}},
           {"launch_latency",
            {"over 20 steps the queue keeps growing: the wait grows >= 3x",
             "the CPU enqueues faster than the GPU drains",
             {C("/growth", Op::Ge, 3, Gpu, 4096)}}},
           {"throughput",
            {"the median GEMM still runs at >= 40% of peak (and <= 105%)",
             "the median ignores the odd slow sample",
             {C("/gemm_pct_of_peak", Op::Ge, 40, Gpu, 4096), C("/gemm_pct_of_peak", Op::Le, 105, Gpu)}}},
           cpu_compute_bound,
       }});

  // ---- 05: compiled addmm -------------------------------------------------------------------
  specs.push_back(
      {"05_compiled_addmm",
       "addmm: the compiler's rewrite, by hand",
       {4096, 1, 2},
       {
           {"dispatch_chain",
            {"one aten::addmm under the annotation instead of matmul + add",
             "Inductor (and torch::addmm by hand) rewrite add(matmul(x, w), b) into addmm(b, x, w)",
             {C("/paths", Op::Contains, "aten::addmm"), C("/paths", Op::NotContains, "aten::matmul")}}},
           {"copies_next_to_launch",
            {"the bias is copied into the output (Memcpy DtoD) before the GEMM",
             "addmm's beta=1 epilogue adds into an output that already holds b: a copy the CPU lane "
             "hides inside aten::addmm (at 4096, 32 MB of bf16 bias copied every step)",
             {C("/dtod_before_gemm", Op::Ge, 1, Gpu)}}},
           {"launch_path",
            {"Hopper: the GEMM is the beta-add variant (..._badd_...) launched by cuLaunchKernelEx",
             "eager matmul runs ..._bz_... (beta zero); addmm's epilogue reads the output",
             {C("/gemm_kernels", Op::Contains, "_badd_", Hopper),
              C("/gemm_launchers", Op::Contains, "cuLaunchKernelEx", Hopper)}}},
           {"throughput",
            {"the DtoD copy runs near memory bandwidth (>= 40%)",
             "the copy reads and writes 32 MB each at 4096: a pure memory stream, near 4.8 TB/s",
             {C("/memcpy_pct_of_peak", Op::Ge, 40, Gpu, 4096), C("/memcpy_pct_of_peak", Op::Le, 105, Gpu)}}},
       }});
  // Chapter 05 profiles each variant into out/05_compiled_addmm/<variant>/ and judges it with
  // "05_compiled_addmm/<variant>"; the lessons comparing variants live in the chapter itself.
  {
    LessonSpec addmm = specs.back();
    addmm.chapter = "05_compiled_addmm/addmm";
    specs.push_back(std::move(addmm));
  }
  specs.push_back(
      {"05_compiled_addmm/eager",
       "eager: matmul, then add",
       {4096, 1, 2},
       {
           {"dispatch_chain",
            {"aten::matmul > aten::mm, then aten::add: two ops, two kernels",
             "the baseline the rewrite removes an op from",
             {C("/paths", Op::Contains, "aten::mm"), C("/paths", Op::NotContains, "aten::addmm")}}},
           {"launch_path",
            {"Hopper: the GEMM has the beta-zero epilogue (..._bz_...)",
             "nothing to add into: the GEMM overwrites its output; compare addmm's _badd_",
             {C("/gemm_kernels", Op::Contains, "_bz_", Hopper)}}},
       }});
  specs.push_back(
      {"05_compiled_addmm/aoti",
       "AOTInductor: Inductor's generated code, loaded from C++",
       {4096, 1, 2},
       {
           {"dispatch_chain",
            {"no aten::matmul or aten::mm: the generated wrapper calls the addmm shim directly",
             "aoti_torch_<device>_addmm_out goes to the addmm kernel without the dispatcher, so no "
             "aten::addmm row either (CPU: its bias copy shows as aten::copy_)",
             {C("/paths", Op::NotContains, "aten::matmul"), C("/paths", Op::NotContains, "aten::mm"),
              C("/paths", Op::NotContains, "aten::addmm"),
              // What the generated code does call: on a GPU the bias copy and the GEMM launch sit
              // straight under the annotation; on a CPU the bias copy is the one aten op left.
              C("/paths", Op::Contains, "matmul_add > cudaMemcpyAsync > Memcpy DtoD", Gpu),
              C("/paths", Op::Contains, "matmul_add > cuLaunchKernelEx > nvjet", Hopper),
              C("/paths", Op::Contains, "matmul_add > aten::copy_", Scope::Cpu)}}},
           {"launch_path",
            {"Hopper: the same beta-add GEMM (..._badd_...) as torch::addmm",
             "Inductor emits the same addmm call as the hand rewrite; no new kernel",
             {C("/gemm_kernels", Op::Contains, "_badd_", Hopper)}}},
       }});
  specs.push_back(
      {"05_compiled_addmm/graph",
       "CUDA graph replay of one captured step",
       {4096, 1, 2},
       {
           {"dispatch_chain",
            {"no aten op per step: the CPU replays the captured kernels with one call",
             "the ops ran once, at capture; a replay skips the dispatcher",
             {C("/paths", Op::NotContains, "aten::", Gpu)}}},
           {"launch_path",
            {"every kernel is launched by cudaGraphLaunch",
             "H200: one cudaGraphLaunch per step, no cudaLaunchKernel/cuLaunchKernelEx on the CPU lane",
             {C("/gemm_launchers", Op::Contains, "cudaGraphLaunch", Gpu),
              C("/elementwise_launchers", Op::Contains, "cudaGraphLaunch", Gpu)}}},
       }});
  add_part2_specs(specs);
  return specs;
}

}  // namespace

const std::vector<LessonSpec>& lesson_specs() {
  static const std::vector<LessonSpec> kSpecs = build_specs();
  return kSpecs;
}

const LessonSpec* find_lesson_spec(std::string_view chapter) {
  for (const auto& s : lesson_specs())
    if (s.chapter == chapter) return &s;
  return nullptr;
}

void tally(LessonsReport& r) {
  r.passed = r.failed = r.not_applicable = 0;
  for (const auto& f : r.facts) {
    if (f.status == Status::Pass) r.passed++;
    if (f.status == Status::Fail) r.failed++;
    if (f.status == Status::NotApplicable) r.not_applicable++;
  }
}

namespace {

LessonsReport header(const TraceModel& m, const FactOptions& o) {
  LessonsReport r;
  r.source = m.trace().source;
  r.device = m.trace().devices.empty() ? (m.trace().has_device_activity() ? "GPU (no "
                                                                            "deviceProperties)"
                                                                          : "CPU only")
                                       : m.trace().devices.front().name;
  r.options = o;
  return r;
}
}  // namespace

LessonsReport check_lessons(const TraceModel& m, const LessonSpec& spec, const FactOptions& o) {
  FactOptions opts = o;
  if (opts.problem.n <= 0) opts.problem = spec.problem;
  LessonsReport r = header(m, opts);
  r.chapter = spec.chapter;
  r.title = spec.title;
  const lessons_detail::View view(m);    // once, for every fact
  std::map<std::string, Fact> measured;  // each fact once, however many expectations use it
  const bool gpu_run = m.trace().has_device_activity();
  for (const auto& e : spec.expect) {
    // A lesson about the CPU edition has nothing to say about a GPU run: it is left out there
    // (GPU lessons stay in a CPU report as not applicable: they say what a GPU would show).
    const bool cpu_only =
        !e.pattern.all.empty() && std::all_of(e.pattern.all.begin(), e.pattern.all.end(),
                                              [](const Condition& c) { return c.scope == Scope::Cpu; });
    if (gpu_run && cpu_only) continue;
    auto it = measured.find(e.fact);
    if (it == measured.end())
      it = measured.emplace(e.fact, lessons_detail::compute_fact(e.fact, view, opts)).first;
    Fact f = apply_pattern(it->second, e.pattern, m.trace(), opts.problem);
    if (f.status == Status::NotApplicable && !f.measured) {
      // Not measured: fine for a lesson about another platform, a failure for one about this one.
      const bool gpu = m.trace().has_device_activity(), hopper = is_hopper(m.trace());
      bool applies = false;
      for (const auto& c : e.pattern.all)
        applies = applies || out_of_scope(c, gpu, hopper, opts.problem).empty();
      if (applies) {
        f.status = Status::Fail;
        f.verdict = "could not be measured, although the lesson applies to this run: " + f.explanation;
      }
    }
    r.facts.push_back(std::move(f));
  }
  tally(r);
  r.min_passes = m.trace().has_device_activity() ? 1 : std::max(1, spec.min_cpu_passes);
  return r;
}

std::vector<std::string> user_annotations(const TraceModel& m) {
  std::vector<std::string> names;
  const bool stepped = !m.steps().empty();
  for (const CpuLane& lane : m.cpu_lanes()) {
    for (EventIdx i : lane.events) {
      const Event& e = m.at(i);
      if (e.kind != Kind::UserAnnotation || is_step_name(e.name) || e.name.empty()) continue;
      const auto parent = m.parent(i);
      const bool top = stepped ? parent && is_step_name(m.at(*parent).name) : !parent;
      if (!top) continue;
      if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
    }
  }
  // First appearance in time, not lane order.
  auto first_start = [&](const std::string& n) {
    int64_t t = INT64_MAX;
    for (EventIdx i : m.find(n)) t = std::min(t, m.at(i).start_ns);
    return t;
  };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return first_start(a) < first_start(b);
  });
  return names;
}

namespace {
// inspect only (chapter verdicts stay as recorded): a failed pattern whose other conditions this
// trace cannot judge -- they describe Hopper GPUs, or need a GPU -- says so, so that a "no" on
// another device reads as "not this device", not as "not there".
void note_device_scope(Fact& f, const Trace& trace, bool gpu, bool hopper) {
  if (f.status != Status::Fail) return;
  std::vector<std::string> only;
  for (const auto& c : f.pattern.all) {
    if (c.scope == Scope::Hopper && !(gpu && hopper)) only.push_back("Hopper GPUs (H100/H200)");
    if (c.scope == Scope::Gpu && !gpu) only.push_back("GPU traces");
    if (c.scope == Scope::Cpu && gpu) only.push_back("CPU-only traces");
  }
  const std::string dev = trace.devices.empty() ? "CPU only" : trace.devices.front().name;
  if (!f.devices.empty())
    f.verdict += fmt::format(" (this rule depends on the device: {}; this trace: {})", f.devices, dev);
  if (only.empty()) return;
  std::sort(only.begin(), only.end());
  only.erase(std::unique(only.begin(), only.end()), only.end());
  f.verdict += fmt::format(" (part of this rule holds only on {}; this trace: {}: not judged here)",
                           lessons_detail::join(only, " and ", ""), dev);
}
}  // namespace

LessonsReport inspect_trace(const TraceModel& m, const FactOptions& o) {
  LessonsReport r = header(m, o);
  r.kind = "inspect";
  r.title = "Cheatsheet patterns found in the trace";
  const lessons_detail::View view(m);  // once, for every fact
  std::vector<std::string> annotations;
  if (o.annotation.empty()) annotations = user_annotations(m);
  const bool gpu = m.trace().has_device_activity(), hopper = is_hopper(m.trace());  // once
  // Every fact to measure, in report order: (fact, options, the annotation it is judged for).
  struct Task {
    const lessons_detail::ViewFact* fi;
    FactOptions opts;
    const std::string* annotation;  // per-annotation facts only
    bool no_annotation;             // a per-annotation fact with no annotation to look into
  };
  std::vector<Task> tasks;
  for (const auto& fi : lessons_detail::view_facts()) {
    const bool per_annotation = fi.id == "dead_window" || fi.id == "dispatch_chain";
    if (!per_annotation || !o.annotation.empty()) {
      tasks.push_back({&fi, o, nullptr, false});
    } else if (annotations.empty()) {
      tasks.push_back({&fi, o, nullptr, true});
    } else {
      for (const auto& name : annotations) {
        tasks.push_back({&fi, o, &name, false});
        tasks.back().opts.annotation = name;
      }
    }
  }
  // The facts only read the trace, so on a big one two threads share them (the overhead-bound
  // fact's key_averages alone is ~0.1 s of a 100 MB trace); the report keeps the order above.
  std::vector<Fact> measured(tasks.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();)
      measured[i] = tasks[i].fi->fn(view, tasks[i].opts);
  };
  constexpr size_t kParallelEvents = 50'000;
  if (m.trace().events.size() >= kParallelEvents && tasks.size() > 1) {
    auto other = std::async(std::launch::async, work);
    work();
    other.get();
  } else {
    work();
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    Fact f = std::move(measured[i]);
    if (tasks[i].no_annotation) {  // the fact says there is no annotation to look into
      f.status = Status::NotApplicable;
      f.verdict =
          "not applicable: no user annotation (record_function) at the top of a step; "
          "wrap the code to study in one, or name one with --annotation";
    } else if (tasks[i].annotation) {
      f.title += fmt::format(" ('{}')", *tasks[i].annotation);
    }
    note_device_scope(f, m.trace(), gpu, hopper);
    r.facts.push_back(std::move(f));
  }
  if (o.annotation.empty()) r.options.annotation = lessons_detail::join(annotations, ", ", "");
  tally(r);
  return r;
}

}  // namespace wb
