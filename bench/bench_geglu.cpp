// The GeGLU pointwise stage y = gelu_tanh(g) * u on [8192, 3072] bf16, three ways, in one run:
//   eager        torch::gelu(g, "tanh") * u: two ATen kernels, 5 x 50.3 MB = 252 MB moved
//   inductor     Inductor's fused Triton kernel (an AOTI package of just gelu(g)*u, built at
//                build time by chapters/export_aoti.py --model geglu): 151 MB
//   handwritten  models/geglu/geglu_kernel.cu: 151 MB, in its default launch configuration
//                and in every other one it compiles (wb07::geglu_configs()): the default must win
// against a measured device-to-device copy of 151 MB (302 MB of traffic) as the bandwidth yardstick.
// Two clocks, named apart:
//   end-to-end per call  CUDA events around `calls` back-to-back calls, after warm-ups; the median
//                        of `reps` such rounds, the variants interleaved within each round so clock
//                        drift hits all alike. Includes whatever the host adds between kernels (the
//                        AOTI runner's cudaEventQuery/cudaEventSynchronize before each run).
//   kernel per call      the kernels' own device time, from wb::Profiler's trace (CUPTI): the sum of
//                        the kernels launched inside one call, median over `--profile-calls` calls,
//                        in three conditions: back to back (as the end-to-end loop), right after the
//                        MLP's gate and up GEMMs wrote g and u (as in chapter 07: part of u may still
//                        be in the 50 MB L2), and after writing a 256 MB buffer (L2 flushed: every
//                        byte from HBM). No CUPTI census in this process: one subscriber per process.
//
//   bench_geglu [--reps 9] [--calls 50] [--profile-calls 20] [--out FILE.md] [--json FILE.json]
//               [--aoti NAME=MANIFEST.json]...
// --aoti adds another AOTI package of gelu(g)*u (export_aoti.py --model geglu with other Inductor
// options) as a contender. Goals, judged on kernel time with L2 flushed:
// handwritten >= 1.7x eager, no slower than Inductor, >= 85% of the copy's bandwidth. Needs a
// GPU; exits 2 with the reason otherwise.
#include <cuda_runtime.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "geglu.hpp"
#include "geglu_kernel.hpp"
#include "geglu_race.hpp"
#include "workbook/aoti.hpp"
#include "workbook/profiler.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace.hpp"
#include "workbook/trace_reader.hpp"

namespace {

struct Variant {
  std::string name;
  double mb;  // bytes moved per call, MB
  std::function<void()> call;
  std::vector<double> us;  // per-call time of each round
};

double time_calls(const std::function<void()>& f, int calls, cudaStream_t s) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s);
  for (int i = 0; i < calls; ++i) f();
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 1000.0 * ms / calls;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9, calls = 50, profile_calls = 20;
  std::string out, json_out;
  std::vector<std::pair<std::string, std::string>> extra_aoti;  // --aoti NAME=MANIFEST
  const char* usage =
      "usage: bench_geglu [--reps N] [--calls N] [--profile-calls N] [--out FILE.md] [--json FILE] "
      "[--aoti NAME=MANIFEST]...\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--reps" || a == "--calls" || a == "--profile-calls" || a == "--out" || a == "--json" ||
         a == "--aoti") &&
        i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--out") {
        out = v;
      } else if (a == "--json") {
        json_out = v;
      } else if (a == "--aoti") {
        const auto eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || !std::filesystem::exists(v.substr(eq + 1))) {
          std::cerr << "bench_geglu: --aoti wants NAME=MANIFEST.json (an existing file), got '" << v << "'\n";
          return 2;
        }
        extra_aoti.emplace_back(v.substr(0, eq), v.substr(eq + 1));
      } else {
        (a == "--reps" ? reps : a == "--calls" ? calls : profile_calls) = std::atoi(v.c_str());
      }
    } else {
      std::cerr << usage;
      return 2;
    }
  }
  if (reps < 1 || calls < 1 || profile_calls < 1) {
    std::cerr << "bench_geglu: --reps, --calls and --profile-calls must be >= 1\n";
    return 2;
  }
  if (!torch::cuda::is_available()) {
    std::cerr << "bench_geglu: needs a CUDA GPU (none visible to LibTorch)\n";
    return 2;
  }
  const std::string why = wb07::handwritten_unavailable(torch::Device(torch::kCUDA), torch::kBFloat16);
  if (!why.empty()) {
    std::cerr << "bench_geglu: " << why << "\n";
    return 2;
  }
  torch::NoGradGuard no_grad;
  const int64_t rows = 8192, hidden = 3072;
  const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  torch::manual_seed(0);
  const auto g = torch::randn({rows, hidden}, opts), u = torch::randn({rows, hidden}, opts);
  const auto src = torch::randn({3 * rows, hidden}, opts);  // 151 MB: the fused call's footprint
  auto dst = torch::empty_like(src);
  const double inter_mb = rows * hidden * 2 / 1e6;
  auto stream = static_cast<cudaStream_t>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(g.device()).native_handle());

  wb::AotiModel inductor(WB07_GEGLU_AOTI_MANIFEST);
  torch::Tensor y;
  std::vector<Variant> vs{
      {"copy (DtoD, 151 MB)", 2 * 3 * inter_mb, [&] { dst.copy_(src); }, {}},
      {"eager gelu + mul", 5 * inter_mb, [&] { y = torch::gelu(g, "tanh") * u; }, {}},
      {"handwritten fused", 3 * inter_mb, [&] { y = wb07::geglu_fused(g, u); }, {}},
  };
  torch::Tensor y_cfg = torch::empty_like(g);
  for (const wb07::GegluConfig& c : wb07::geglu_configs())
    vs.push_back({"handwritten, " + wb07::describe(c),
                  3 * inter_mb,
                  [&, c] {
                    const std::string err = wb07::geglu_tanh_bf16(g.data_ptr(), u.data_ptr(),
                                                                  y_cfg.data_ptr(), g.numel(), stream, c);
                    if (!err.empty()) throw std::runtime_error(err);
                    y = y_cfg;
                  },
                  {}});
  if (inductor.usable_with({g, u}))
    vs.push_back({"inductor fused (AOTI)", 3 * inter_mb, [&] { y = inductor.run({g, u}).at(0); }, {}});
  else
    std::cerr << "bench_geglu: Inductor's kernel unavailable: " << inductor.why_not() << "\n";
  std::vector<std::unique_ptr<wb::AotiModel>> extras;  // --aoti: other exports of the same function
  for (const auto& [name, manifest] : extra_aoti) {
    extras.push_back(std::make_unique<wb::AotiModel>(manifest));
    wb::AotiModel* m = extras.back().get();
    if (m->usable_with({g, u}))
      vs.push_back({"AOTI " + name, 3 * inter_mb, [&, m] { y = m->run({g, u}).at(0); }, {}});
    else
      std::cerr << "bench_geglu: --aoti " << name << " unavailable: " << m->why_not() << "\n";
  }

  // Correctness first: the fused kernels against eager, in bf16 tolerance.
  const auto want = (torch::gelu(g, "tanh") * u).to(torch::kFloat);
  std::ostringstream check;
  for (auto& v : vs) {
    if (v.name.rfind("copy", 0) == 0 || v.name.rfind("eager", 0) == 0) continue;
    v.call();
    const double diff = (y.to(torch::kFloat) - want).abs().max().item<double>();
    check << "  " << v.name << ": max |y - eager| = " << diff << "\n";
  }
  for (auto& v : vs)
    for (int w = 0; w < 10; ++w) v.call();  // warm-up: allocator, Triton/cuBLAS first calls
  cudaDeviceSynchronize();
  for (int r = 0; r < reps; ++r)
    for (auto& v : vs) v.us.push_back(time_calls(v.call, calls, stream));

  // ---- kernel time: the same calls under wb::Profiler, each call in its own annotation -------
  // The contenders of the race: eager, the hand-written kernel (default launch) and every AOTI
  // package; not the copy, not the sweep's other launch configurations.
  std::vector<Variant*> race;
  for (auto& v : vs)
    if (v.name == "eager gelu + mul" || v.name == "handwritten fused" || v.name.rfind("inductor", 0) == 0 ||
        v.name.rfind("AOTI ", 0) == 0)
      race.push_back(&v);
  const char* kConditions[] = {"back to back", "L2 flushed", "after gate+up GEMMs"};
  const auto x = torch::randn({rows, 768}, opts);
  const auto w_gate = torch::randn({hidden, 768}, opts) / 27.7,
             w_up = torch::randn({hidden, 768}, opts) / 27.7;
  auto flush = torch::empty({256 << 20}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kUInt8));
  torch::Tensor g_out = g, u_out = u;  // the GEMMs write into g and u themselves (same storage)
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 1, 1, 1, 0};  // one warm-up step, then one recorded step
  po.cuda = true;
  wb::Profiler prof(po);
  prof.start();
  for (int step = 0; step < 2; ++step) {
    for (const char* cond : kConditions)  // the GEMM condition last: it overwrites g and u in place
      for (Variant* v : race)
        for (int i = 0; i < (step == 0 ? 2 : profile_calls); ++i) {
          if (cond == kConditions[1]) {
            wb::Annotation a("prelude");
            flush.fill_(i & 0xff);  // 256 MB written: the 50 MB L2 holds none of g, u or y after it
          } else if (cond == kConditions[2]) {
            wb::Annotation a("prelude");  // the MLP's order: gate writes g, then up writes u
            torch::mm_out(g_out, x, w_gate.t());
            torch::mm_out(u_out, x, w_up.t());
          }
          wb::Annotation a("race|" + v->name + "|" + cond);
          v->call();
        }
    prof.step();
  }
  prof.stop();
  // Read back from disk, as the chapters do: the saved trace carries what the in-memory events
  // lack (each kernel's grid, block and registers). Kept next to --json (else in /tmp).
  const std::filesystem::path trace_path =
      json_out.empty() ? std::filesystem::temp_directory_path() / "bench_geglu_trace.json"
                       : std::filesystem::path(json_out).replace_filename("bench_geglu_trace.json");
  prof.results().back().save_chrome_trace(trace_path);
  const wb::Trace trace = wb::read_trace(trace_path);
  // Each call's kernels: those whose launch call ran inside its "race|..." annotation.
  geglu_race::Attribution att = geglu_race::attribute(trace);
  auto& kernel_us = att.call_us;
  auto& kernel_names = att.kernels;
  auto& launch_config = att.launch;
  auto kmed = [&](const std::string& who, const char* cond) {
    auto c = kernel_us.find(who);
    if (c == kernel_us.end() || !c->second.count(cond) || c->second.at(cond).empty()) return -1.0;
    return wb::median(c->second.at(cond));
  };

  auto find = [&](const std::string& prefix) -> const Variant* {
    for (const auto& v : vs)
      if (v.name.rfind(prefix, 0) == 0) return &v;
    return nullptr;
  };
  const double copy_gbps = vs[0].mb / wb::median(vs[0].us) * 1e3;  // MB/us = TB/s, x1000 = GB/s
  std::ostringstream os;
  os << "## GeGLU pointwise stage, [8192, 3072] bf16 (bench/bench_geglu.cpp)\n\n"
     << "Device: " << static_cast<int>(torch::cuda::device_count()) << " visible; median of " << reps
     << " rounds of " << calls << " calls each (CUDA events), variants interleaved.\n\n"
     << "| kernel(s) | MB per call | us per call (median) | min..max of rounds | GB/s | % of copy | vs eager "
        "|\n"
     << "|---|---:|---:|---:|---:|---:|---:|\n";
  const double eager_us = wb::median(find("eager")->us);
  char line[2048];
  for (const auto& v : vs) {
    const double med = wb::median(v.us), gbps = v.mb / med * 1e3;
    double lo = v.us[0], hi = v.us[0];
    for (double x : v.us) lo = std::min(lo, x), hi = std::max(hi, x);
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.1f..%.1f | %.0f | %.1f%% | %.2fx |\n",
                  v.name.c_str(), v.mb, med, lo, hi, gbps, 100 * gbps / copy_gbps, eager_us / med);
    os << line;
  }
  const Variant* hand = find("handwritten");
  const Variant* ind = find("inductor");
  const double hand_e2e = wb::median(hand->us);
  // The goals, on kernel time with L2 flushed: no contender is helped by what ran before it.
  const char* flushed = kConditions[1];
  const double hand_k = kmed(hand->name, flushed), eager_k = kmed("eager gelu + mul", flushed);
  const double hand_gbps = hand->mb / hand_k * 1e3;
  os << "\nCorrectness (bf16):\n"
     << check.str() << "\nGoals (kernel time, L2 flushed; end-to-end in brackets):\n";
  std::snprintf(line, sizeof line,
                "  handwritten vs eager: %.2fx faster (goal >= 1.7x): %s [end-to-end %.2fx]\n",
                eager_k / hand_k, eager_k / hand_k >= 1.7 ? "met" : "NOT met", eager_us / hand_e2e);
  os << line;
  if (ind) {
    const double ind_k = kmed(ind->name, flushed);
    std::snprintf(line, sizeof line,
                  "  handwritten vs Inductor (AOTI): %.1f vs %.1f us (goal: no slower): %s [end-to-end %.1f "
                  "vs %.1f us]\n",
                  hand_k, ind_k, hand_k <= ind_k * 1.01 ? "met" : "NOT met", hand_e2e, wb::median(ind->us));
    os << line;
    os << "  handwritten vs Python's torch.compile kernel: judged by bench/bench_geglu_vs_python.py (the "
          "race table)\n";
  } else {
    os << "  handwritten vs Inductor: not measured (" << inductor.why_not() << ")\n";
  }
  std::snprintf(
      line, sizeof line,
      "  handwritten bandwidth: %.0f GB/s = %.1f%% of the measured copy's %.0f GB/s (goal >= 85%%): %s\n",
      hand_gbps, 100 * hand_gbps / copy_gbps, copy_gbps, hand_gbps >= 0.85 * copy_gbps ? "met" : "NOT met");
  os << line;

  // The race: each contender's kernel time in the three conditions beside its end-to-end time.
  os << "\n## Kernel time vs end-to-end time per call (wb::Profiler trace; CUDA events)\n\n"
     << "kernel: the kernels' own device time per call (CUPTI), median of " << profile_calls
     << " calls; end-to-end: CUDA events around " << calls << " back-to-back calls, median of " << reps
     << " rounds.\n\n"
     << "| contender | kernel(s) | launch | kernel us, back to back | kernel us, L2 flushed | kernel us, "
        "after "
        "gate+up GEMMs | end-to-end us per call | end-to-end - kernel |\n"
     << "|---|---|---|---:|---:|---:|---:|---:|\n";
  nlohmann::json j = {{"device", torch::cuda::device_count() > 0 ? "cuda" : ""},
                      {"copy_gbps", copy_gbps},
                      {"profile_calls", profile_calls},
                      {"calls", calls},
                      {"reps", reps},
                      {"contenders", nlohmann::json::array()}};
  for (const Variant* v : race) {
    const double b2b = kmed(v->name, kConditions[0]), fl = kmed(v->name, kConditions[1]),
                 hot = kmed(v->name, kConditions[2]), e2e = wb::median(v->us);
    std::string names;
    for (const auto& n : kernel_names[v->name])
      names += (names.empty() ? "" : " + ") + (n.size() > 60 ? n.substr(0, 57) + "..." : n);
    std::snprintf(line, sizeof line, "| %s | `%s` | %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                  v->name.c_str(), names.c_str(), launch_config[v->name].c_str(), b2b, fl, hot, e2e,
                  e2e - b2b);
    os << line;
    j["contenders"].push_back(
        {{"name", v->name},
         {"mb", v->mb},
         {"kernels", kernel_names[v->name]},
         {"launch", launch_config[v->name]},
         {"kernel_us", {{"back_to_back", b2b}, {"l2_flushed", fl}, {"after_gemms", hot}}},
         {"kernel_samples", kernel_us[v->name]},
         {"trace", trace_path.string()},
         {"e2e_us", e2e},
         {"e2e_rounds_us", v->us}});
  }
  os << "\nL2: a kernel reading 151 MB faster than the copy's bandwidth allows ("
     << static_cast<int>(copy_gbps)
     << " GB/s) got part of it from L2; compare its 'after GEMMs' and 'L2 flushed' columns.\n";
  const Variant* fastest = nullptr;
  for (const auto& v : vs)
    if (v.name.rfind("handwritten, ", 0) == 0 && (!fastest || wb::median(v.us) < wb::median(fastest->us)))
      fastest = &v;
  if (fastest) {
    std::snprintf(line, sizeof line,
                  "  fastest launch configuration (end-to-end): %s, %.1f us (the default, %s: %.1f us)\n",
                  fastest->name.substr(13).c_str(), wb::median(fastest->us),
                  wb07::describe(wb07::GegluConfig{}).c_str(), hand_e2e);
    os << line;
  }
  std::cout << os.str();
  if (!out.empty()) std::ofstream(out) << os.str();
  if (!json_out.empty()) {
    const std::string tmp = json_out + ".partial";
    std::ofstream(tmp) << j.dump(1) << "\n";
    std::filesystem::rename(tmp, json_out);
  }
  return 0;
}
