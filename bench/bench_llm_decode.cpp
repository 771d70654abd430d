// Tokens/s of chapter 09's decoder (models/llm/llm.hpp) at batch B (B sequences decoded together,
// one token each per step), N new tokens after a P-token prompt: C++ eager vs C++ CUDA graph,
// against the weight-read bound (the weights one step reads / the measured device copy
// bandwidth). Chapter 11's hand-written kernels are M = 1 GEMVs: timed at batch 1 only.
// bench_llm_decode.py runs the same shapes in Python (eager and torch.compile).
//
//   build/bench/bench_llm_decode [--config 1b] [--batch 1] [--prompt 512] [--new-tokens 64] [--json FILE]
//
// Figures are medians over --repeats generations (each: prefill, then the decode steps, timed
// from the first decode step to a device synchronize after the last). A step reads every weight
// once whatever B is, and does B times the FLOPs: while the step is bandwidth-bound its time stays
// flat as B grows (run it at --batch 1, 8 and 64 and compare the time per step: "ms/token" at
// batch 1, where a step is one token, "ms/step" above). On a CPU (no CUDA device, or --device
// cpu) only eager runs: a smoke test, no peak known.
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "decode_kernels.hpp"  // chapter 11: the decode step on hand-written kernels
#include "llm.hpp"
#include "llm_graph.hpp"
#include "workbook/cli.hpp"       // wb::parse_flags, wb::whole_number
#include "workbook/peaks.hpp"     // wb::find_peak: the device's bf16 TFLOP/s and HBM TB/s
#include "workbook/profiler.hpp"  // wb::synchronize_device, wb::cuda_available, wb::bytes_available
#include "workbook/stats.hpp"     // wb::median

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The napkin math of one decode step at batch B (every figure per step, B tokens).
struct Napkin {
  double weight_bytes = 0;  // every weight but the embedding, read once per step whatever B is
  double kv_bytes = 0;      // the KV cache the B sequences' attention reads, at the mean position
  double flop = 0;          // 2 x parameters x B (the GEMMs) + attention's 4 x position x dim per layer
  double attn_flop = 0;
  double intensity_weights = 0;  // GEMM FLOPs / weight bytes: 2 x B / bytes per element
  double intensity = 0;          // all FLOPs / (weights + KV cache)
  const wb::DevicePeak* peak = nullptr;
  double ridge = 0;                // peak FLOP/s / peak bytes/s (FLOP per byte); 0: no peak known
  double ridge_batch_weights = 0;  // the batch at which intensity_weights reaches the ridge
  double ridge_batch = 0;          // the same with the KV cache's bytes; < 0: never at this context
};

Napkin napkin(const llm::Config& c, int64_t batch, double mean_pos, int elem_bytes,
              const std::string& device) {
  Napkin n;
  const double p = static_cast<double>(llm::parameters_read_per_token(c)), b = static_cast<double>(batch);
  n.weight_bytes = p * elem_bytes;
  const double kv_per_seq =
      static_cast<double>(c.layers) * 2 * c.kv_heads * c.head_dim() * mean_pos * elem_bytes;
  const double attn_per_seq = static_cast<double>(c.layers) * 4 * c.dim * mean_pos;  // q.k and p.v
  n.kv_bytes = kv_per_seq * b;
  n.attn_flop = attn_per_seq * b;
  n.flop = 2 * p * b + n.attn_flop;
  n.intensity_weights = 2 * p * b / n.weight_bytes;
  n.intensity = n.flop / (n.weight_bytes + n.kv_bytes);
  n.peak = device.empty() ? nullptr : wb::find_peak(device);
  const double tflops = n.peak ? wb::peak_tflops(*n.peak, elem_bytes) : 0;
  if (n.peak && tflops > 0) {
    n.ridge = tflops * 1e12 / (n.peak->mem_tbps * 1e12);
    n.ridge_batch_weights = n.ridge * elem_bytes / 2;
    // (2 p + a) B / (W + k B) = ridge  ->  B = ridge W / (2 p + a - ridge k), when positive.
    const double denom = 2 * p + attn_per_seq - n.ridge * kv_per_seq;
    n.ridge_batch = denom > 0 ? n.ridge * n.weight_bytes / denom : -1;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cfg_name = "1b", json_path, device_flag = "auto";
  int64_t batch = 1, prompt = 512, new_tokens = 64, repeats = 5;
  CLI::App app{
      "Tokens/s of chapter 09's decoder at batch B: C++ eager, CUDA graph (and chapter 11's kernels at "
      "batch 1) against the weight-read bound, with the step's napkin math (bytes, FLOPs, intensity "
      "against the device's ridge point).",
      "bench_llm_decode"};
  app.add_option("--config", cfg_name, "model: tiny | 1b")->capture_default_str();
  app.add_option("--batch", batch, "sequences decoded together: B tokens per step")
      ->check(wb::whole_number(1, 4096, "sequences"))
      ->capture_default_str();
  app.add_option("--prompt", prompt, "prompt tokens")
      ->check(wb::whole_number(1, 8192, "tokens"))
      ->capture_default_str();
  app.add_option("--new-tokens", new_tokens, "decode steps timed per generation")
      ->check(wb::whole_number(2, 4096, "tokens"))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "timed generations (the median is printed; one more warms up)")
      ->check(wb::whole_number(1, 1000, "generations"))
      ->capture_default_str();
  app.add_option("--device", device_flag,
                 "auto (cuda when there is one) | cuda | cpu (eager only: a smoke test)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the figures as JSON to FILE (atomically)");

  llm::Config cfg;
  bool cuda = false;
  int64_t capacity = 0;
  auto validate = [&] {
    try {
      cfg = llm::config(cfg_name);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--config", e.what());
    }
    const bool have_cuda = wb::cuda_available();
    if (device_flag == "cuda" && !have_cuda)
      throw CLI::ValidationError("--device cuda",
                                 "no CUDA device is visible to LibTorch (use --device cpu or auto)");
    cuda = device_flag == "cuda" || (device_flag == "auto" && have_cuda);
    // The KV cache holds the prompt, the new tokens and 8 rows of slack (the graph's warm-up
    // writes); every buffer the run holds at once must fit before anything is allocated.
    capacity = prompt + new_tokens + 8;
    const int elem = cuda ? 2 : 4;
    const double kv =
        static_cast<double>(batch) * cfg.layers * 2 * cfg.kv_heads * cfg.head_dim() * capacity * elem;
    const double weights = static_cast<double>(llm::parameters(cfg)) * elem;
    const double copy = cuda ? 2.0 * (int64_t{1} << 29) * 2 : 2.0 * (int64_t{1} << 24) * 4;
    const double need = weights + kv + copy;  // one cache at a time (each side frees its own)
    std::string source;                       // where the figure comes from (not printed here)
    const double avail = wb::bytes_available(cuda, source);
    if (avail >= 0 && need > avail) {
      char msg[400];
      std::snprintf(msg, sizeof msg,
                    "%lld sequences x %lld positions (--prompt %lld + --new-tokens %lld + 8): the KV cache "
                    "(%.2f GB) + the weights (%.2f GB) + the copy buffers need %.2f GB, but only %.2f GB "
                    "of %s memory is available",
                    static_cast<long long>(batch), static_cast<long long>(capacity),
                    static_cast<long long>(prompt), static_cast<long long>(new_tokens), kv / 1e9,
                    weights / 1e9, need / 1e9, avail / 1e9, cuda ? "GPU" : "host");
      throw CLI::ValidationError("--batch", msg);
    }
  };
  if (const std::optional<int> code = wb::parse_flags(app, argc, argv, validate)) return *code;

  torch::NoGradGuard no_grad;
  const torch::Device dev(cuda ? torch::kCUDA : torch::kCPU);
  const auto dtype = cuda ? torch::kBFloat16 : torch::kFloat;
  const int elem_bytes = cuda ? 2 : 4;
  const auto opts = torch::TensorOptions().dtype(dtype).device(dev);
  const std::string device_name = cuda ? wb::cuda_device_name() : "";
  std::fprintf(stderr, "bench_llm_decode: %s at batch %lld on %s: building the model...\n", cfg.name.c_str(),
               static_cast<long long>(batch),
               cuda ? (device_name.empty() ? "a GPU" : device_name.c_str()) : "the CPU");
  llm::Model model(cfg, opts, 0, capacity);
  const torch::Tensor tokens = llm::random_prompt(cfg, batch, prompt, 1, dev);

  // The bound: weights read per step / device copy bandwidth (read + write bytes).
  const auto src = torch::empty({int64_t{1} << (cuda ? 29 : 24)}, opts);
  auto dst = torch::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  wb::synchronize_device();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) dst.copy_(src);
  wb::synchronize_device();
  const double bw_gbps = 2.0 * static_cast<double>(src.nbytes()) * 20 / (ms_since(t0) * 1e-3) / 1e9;
  const Napkin nk = napkin(cfg, batch, static_cast<double>(prompt) + static_cast<double>(new_tokens) / 2,
                           elem_bytes, device_name);
  const double bound_ms = nk.weight_bytes / (bw_gbps * 1e9) * 1e3;

  // One timed side: `repeats` + 1 generations (the first warms up), ms per decode step.
  auto timed = [&](llm::KvCache& kv, const std::function<void(const torch::Tensor&)>& start,
                   const std::function<void(int64_t)>& step) {
    std::vector<double> ms;
    for (int64_t r = 0; r < repeats + 1; ++r) {
      start(model.prefill(tokens, kv).argmax(-1, true));
      wb::synchronize_device();
      const auto t = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < new_tokens; ++i) step(i);
      wb::synchronize_device();
      if (r > 0) ms.push_back(ms_since(t) / static_cast<double>(new_tokens));
    }
    return wb::median(ms);
  };

  std::fprintf(stderr, "bench_llm_decode: timing eager...\n");
  std::vector<std::pair<std::string, double>> rows;  // name, ms per step
  {
    // Eager: chapter 09's decode (sliced attention on the static cache; each prefill rewrites it).
    auto kv = llm::KvCache::preallocated(cfg, batch, capacity, opts);
    torch::Tensor next;
    rows.emplace_back("C++ eager",
                      timed(
                          kv, [&](const torch::Tensor& first) { next = first; },
                          [&](int64_t i) { next = model.decode(next, prompt + i, kv).argmax(-1, true); }));
  }
  // Graph: one replay per step (chapter 10), then the same after the first fusion step
  // (Model::set_fused): fewer, fused kernels per layer.
  std::vector<std::string> skipped;
  const std::string no_graph = llm::DecodeGraph::unavailable(dev);
  for (const bool fused : {false, true}) {
    const std::string name = fused ? "C++ graph, fused" : "C++ graph";
    if (!no_graph.empty()) {
      skipped.push_back(name + ": " + no_graph);
      continue;
    }
    std::fprintf(stderr, "bench_llm_decode: timing %s...\n", name.c_str());
    model.set_fused(fused);
    auto kv = llm::KvCache::preallocated(cfg, batch, capacity, opts);
    llm::DecodeGraph g(model, kv, batch);
    rows.emplace_back(name, timed(
                                kv, [&](const torch::Tensor& first) { g.set(first, prompt); },
                                [&](int64_t) { g.replay(); }));
    model.set_fused(false);
  }
  // Chapter 11: the decode step on the hand-written kernels, one step of it after another, each
  // captured as a graph. Batch 1 only: every projection is an M = 1 GEMV.
  std::vector<std::pair<std::string, double>> steps;
  if (batch > 1) {
    skipped.push_back("C++ kernels (chapter 11): at batch " + std::to_string(batch) +
                      ": its kernels are M = 1 GEMVs (one activation row against each weight matrix), "
                      "written for batch 1 only");
  } else {
    for (const auto step :
         {llmk::Step::Gemv, llmk::Step::Fused, llmk::Step::Attention, llmk::Step::Overlap}) {
      const std::string name = std::string("C++ kernels, ") + llmk::step_name(step);
      auto kv = llm::KvCache::preallocated(cfg, 1, capacity, opts);
      llmk::Decoder d(model, kv, step);
      try {
        d.capture();
      } catch (const std::exception& e) {
        skipped.push_back(name + ": " + e.what());
        continue;
      }
      std::fprintf(stderr, "bench_llm_decode: timing %s...\n", name.c_str());
      steps.emplace_back(
          llmk::step_name(step),
          timed(
              kv, [&](const torch::Tensor& first) { d.set(first, prompt); }, [&](int64_t) { d.replay(); }));
    }
  }

  const double e = rows.front().second;
  const double gf = rows.size() == 3 ? rows[2].second : 0;
  const double b = static_cast<double>(batch);
  // A step is B tokens. At batch 1 it is one token: "ms/token", as the recorded batch-1 outputs read.
  const char* unit = batch == 1 ? "ms/token" : "ms/step";
  std::printf(
      "bench_llm_decode: %s (%.3f B parameters), batch %lld, %lld new tokens after a %lld-token prompt, %s, "
      "%s\n",
      cfg.name.c_str(), llm::parameters(cfg) / 1e9, static_cast<long long>(batch),
      static_cast<long long>(new_tokens), static_cast<long long>(prompt), cuda ? "bf16" : "fp32",
      cuda ? (device_name.empty() ? "unnamed GPU" : device_name.c_str()) : "CPU");
  std::printf(
      "  copy bandwidth %.0f GB/s; weights read per step %.3f GB; bound %.3f %s (%.0f tokens/s at batch "
      "%lld)\n",
      bw_gbps, nk.weight_bytes / 1e9, bound_ms, unit, 1e3 / bound_ms * b, static_cast<long long>(batch));
  // The napkin math: bytes and FLOPs per step, the intensity against the ridge point.
  std::printf(
      "  napkin per step: weights %.3f GB (read once per step whatever the batch), KV cache %.3f GB (%lld x "
      "%.0f "
      "positions on average); %.2f GFLOP (2 x %.3f B parameters x %lld + attention %.2f GFLOP)\n",
      nk.weight_bytes / 1e9, nk.kv_bytes / 1e9, static_cast<long long>(batch),
      static_cast<double>(prompt) + static_cast<double>(new_tokens) / 2, nk.flop / 1e9,
      llm::parameters_read_per_token(cfg) / 1e9, static_cast<long long>(batch), nk.attn_flop / 1e9);
  if (nk.peak && nk.ridge > 0) {
    const double tflops = wb::peak_tflops(*nk.peak, elem_bytes);
    const double compute_ms = nk.flop / (tflops * 1e12) * 1e3;
    std::printf(
        "  intensity %.1f FLOP/byte on the weights (%.1f with the KV cache); %s ridge point %.0f FLOP/byte "
        "(%.0f TFLOP/s / %.2f TB/s, datasheet): %s\n",
        nk.intensity_weights, nk.intensity, std::string(nk.peak->model).c_str(), nk.ridge, tflops,
        nk.peak->mem_tbps, nk.intensity < nk.ridge ? "bandwidth-bound" : "compute-bound");
    std::printf(
        "  compute floor %.3f ms/step at the datasheet's %.0f TFLOP/s (%.1f%% of the weight-read bound)\n",
        compute_ms, tflops, 100 * compute_ms / bound_ms);
    std::printf("  compute-bound from batch ~%.0f on the weights alone (intensity = batch for bf16)",
                nk.ridge_batch_weights);
    if (nk.ridge_batch > 0)
      std::printf("; ~%.0f with the KV cache of a %.0f-token context\n", nk.ridge_batch,
                  static_cast<double>(prompt) + static_cast<double>(new_tokens) / 2);
    else
      std::printf(
          "; never with the KV cache of a %.0f-token context (each sequence's own cache reads grow with the "
          "batch "
          "as fast as its FLOPs)\n",
          static_cast<double>(prompt) + static_cast<double>(new_tokens) / 2);
  } else {
    std::printf(
        "  intensity %.1f FLOP/byte on the weights (%.1f with the KV cache); %s: no peak known, no ridge "
        "point\n",
        nk.intensity_weights, nk.intensity,
        cuda ? ("GPU '" + device_name + "' is not in common/core/data/device_peaks.json").c_str() : "CPU");
  }
  std::printf(
      "  a bandwidth-bound step takes about the same time at any batch: ms/step flat from --batch 1 to 8 to "
      "64 is "
      "the sign; ms/step growing with the batch, the step turning compute-bound\n");
  for (const auto& [name, ms] : rows) {
    std::printf("  %-17s %8.3f %s  %8.1f tokens/s  %5.1f%% of the bound", name.c_str(), ms, unit,
                1e3 / ms * b, 100 * bound_ms / ms);
    if (name != "C++ eager") std::printf("  (%.2fx eager)", e / ms);
    std::printf("\n");
  }
  for (const auto& [name, ms] : steps)
    std::printf("  C++ kernels, %-9s %8.3f %s  %8.1f tokens/s  %5.1f%% of the bound  (%.2fx graph_fused)\n",
                name.c_str(), ms, unit, 1e3 / ms, 100 * bound_ms / ms, gf > 0 ? gf / ms : 0.0);
  for (const auto& s : skipped) std::printf("  skipped: %s\n", s.c_str());

  if (!json_path.empty()) {
    const std::string tmp = json_path + ".tmp";
    {
      std::ofstream f(tmp);
      auto num = [](double v) {
        if (!std::isfinite(v)) return std::string("null");
        std::ostringstream os;
        os.precision(10);
        os << v;
        return os.str();
      };
      f << "{\"config\": \"" << cfg.name << "\", \"batch\": " << batch << ", \"prompt\": " << prompt
        << ", \"new_tokens\": " << new_tokens << ", \"device\": \""
        << (cuda ? device_name : std::string("cpu")) << "\", \"copy_gbps\": " << num(bw_gbps)
        << ", \"bound_ms\": " << num(bound_ms) << ", \"weight_bytes_per_step\": " << num(nk.weight_bytes)
        << ", \"kv_bytes_per_step\": " << num(nk.kv_bytes) << ", \"flop_per_step\": " << num(nk.flop)
        << ", \"intensity_weights\": " << num(nk.intensity_weights)
        << ", \"intensity\": " << num(nk.intensity)
        << ", \"ridge_flop_per_byte\": " << (nk.ridge > 0 ? num(nk.ridge) : "null")
        << ", \"ridge_batch_weights\": " << (nk.ridge > 0 ? num(nk.ridge_batch_weights) : "null")
        << ", \"ridge_batch\": " << (nk.ridge_batch > 0 ? num(nk.ridge_batch) : "null");
      const char* keys[] = {"cpp_eager", "cpp_graph", "cpp_graph_fused"};
      for (size_t i = 0; i < rows.size(); ++i)
        f << ", \"" << keys[i] << "_ms\": " << num(rows[i].second) << ", \"" << keys[i]
          << "_tokens_per_s\": " << num(1e3 / rows[i].second * b);
      for (const auto& [name, ms] : steps) f << ", \"cpp_kernels_" << name << "_ms\": " << num(ms);
      f << "}\n";
    }
    std::rename(tmp.c_str(), json_path.c_str());
  }
  return 0;
}
