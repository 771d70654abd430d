// Tokens/s of chapter 09's decoder (models/llm/llm.hpp) at batch 1, N new
// tokens after a P-token prompt: C++ eager vs C++ CUDA graph, against the weight-read bound
// (the weights one step reads / the measured device copy bandwidth). bench_llm_decode.py runs
// the same shapes in Python (eager and torch.compile(mode="reduce-overhead")).
//
//   build/bench/bench_llm_decode [--config 1b] [--prompt 512] [--new-tokens 64] [--json FILE]
//
// Figures are medians over --repeats generations (each: prefill, then the decode steps, timed
// from the first decode step to a device synchronize after the last).
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "llm.hpp"
#include "llm_graph.hpp"
#include "workbook/profiler.hpp"  // wb::synchronize_device
#include "workbook/stats.hpp"     // wb::median

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int usage(const std::string& why) {
  std::cerr << "bench_llm_decode: " << why
            << "\nusage: bench_llm_decode [--config tiny|1b] [--prompt N] [--new-tokens N] [--repeats N] "
               "[--json FILE]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cfg_name = "1b", json_path;
  int64_t prompt = 512, new_tokens = 64, repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    try {
      if (a == "--config")
        cfg_name = value();
      else if (a == "--prompt")
        prompt = std::stoll(value());
      else if (a == "--new-tokens")
        new_tokens = std::stoll(value());
      else if (a == "--repeats")
        repeats = std::stoll(value());
      else if (a == "--json")
        json_path = value();
      else
        return usage("unknown argument '" + a + "'");
    } catch (const std::exception&) {
      return usage("'" + a + "' needs a number");
    }
  }
  if (prompt < 1 || new_tokens < 2 || repeats < 1)
    return usage("--prompt >= 1, --new-tokens >= 2, --repeats >= 1");
  llm::Config cfg;
  try {
    cfg = llm::config(cfg_name);
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  }
  if (!wb::cuda_available()) {
    std::cerr
        << "bench_llm_decode: needs a CUDA device (the graph and the bandwidth bound are GPU figures)\n";
    return 2;
  }
  torch::NoGradGuard no_grad;
  const torch::Device dev(torch::kCUDA);
  const auto opts = torch::TensorOptions().dtype(torch::kBFloat16).device(dev);
  const int64_t capacity = prompt + new_tokens + 8;
  llm::Model model(cfg, opts, 0, capacity);
  const torch::Tensor tokens = llm::random_prompt(cfg, 1, prompt, 1, dev);

  // The bound: weights read per step / device copy bandwidth (1 GiB copy, read + write).
  const auto src = torch::empty({int64_t{1} << 29}, opts);
  auto dst = torch::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  wb::synchronize_device();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) dst.copy_(src);
  wb::synchronize_device();
  const double bw_gbps = 2.0 * static_cast<double>(src.nbytes()) * 20 / (ms_since(t0) * 1e-3) / 1e9;
  const double read_bytes = static_cast<double>(llm::parameters_read_per_token(cfg)) * 2;
  const double bound_ms = read_bytes / (bw_gbps * 1e9) * 1e3;

  // Eager: chapter 09's decode (sliced attention on the static cache).
  std::vector<double> eager;
  for (int64_t r = 0; r < repeats + 1; ++r) {
    auto kv = llm::KvCache::preallocated(cfg, 1, capacity, opts);
    torch::Tensor next = model.prefill(tokens, kv).argmax(-1, true);
    wb::synchronize_device();
    t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < new_tokens; ++i) next = model.decode(next, prompt + i, kv).argmax(-1, true);
    wb::synchronize_device();
    if (r > 0) eager.push_back(ms_since(t0) / static_cast<double>(new_tokens));  // r = 0 warms up
  }
  // Graph: one replay per token (chapter 10).
  std::vector<double> graph;
  {
    auto kv = llm::KvCache::preallocated(cfg, 1, capacity, opts);
    llm::DecodeGraph g(model, kv, 1);
    for (int64_t r = 0; r < repeats + 1; ++r) {
      const torch::Tensor first = model.prefill(tokens, kv).argmax(-1, true);
      g.set(first, prompt);
      wb::synchronize_device();
      t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < new_tokens; ++i) g.replay();
      wb::synchronize_device();
      if (r > 0) graph.push_back(ms_since(t0) / static_cast<double>(new_tokens));
    }
  }
  // Graph of the first fusion step (Model::set_fused): fewer, fused kernels per layer.
  std::vector<double> fused;
  {
    model.set_fused(true);
    auto kv = llm::KvCache::preallocated(cfg, 1, capacity, opts);
    llm::DecodeGraph g(model, kv, 1);
    for (int64_t r = 0; r < repeats + 1; ++r) {
      const torch::Tensor first = model.prefill(tokens, kv).argmax(-1, true);
      g.set(first, prompt);
      wb::synchronize_device();
      t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < new_tokens; ++i) g.replay();
      wb::synchronize_device();
      if (r > 0) fused.push_back(ms_since(t0) / static_cast<double>(new_tokens));
    }
    model.set_fused(false);
  }
  const double e = wb::median(eager), g = wb::median(graph), gf = wb::median(fused);
  std::printf(
      "bench_llm_decode: %s (%.3f B parameters), batch 1, %lld new tokens after a %lld-token prompt, bf16\n",
      cfg.name.c_str(), llm::parameters(cfg) / 1e9, static_cast<long long>(new_tokens),
      static_cast<long long>(prompt));
  std::printf(
      "  copy bandwidth %.0f GB/s; weights read per step %.3f GB; bound %.3f ms/token (%.0f tokens/s)\n",
      bw_gbps, read_bytes / 1e9, bound_ms, 1e3 / bound_ms);
  std::printf("  C++ eager  %8.3f ms/token  %7.1f tokens/s  %5.1f%% of the bound\n", e, 1e3 / e,
              100 * bound_ms / e);
  std::printf("  C++ graph  %8.3f ms/token  %7.1f tokens/s  %5.1f%% of the bound  (%.2fx eager)\n", g,
              1e3 / g, 100 * bound_ms / g, e / g);
  std::printf("  C++ graph, fused  %8.3f ms/token  %7.1f tokens/s  %5.1f%% of the bound  (%.2fx eager)\n", gf,
              1e3 / gf, 100 * bound_ms / gf, e / gf);
  if (!json_path.empty()) {
    const std::string tmp = json_path + ".tmp";
    {
      std::ofstream f(tmp);
      f << "{\"config\": \"" << cfg.name << "\", \"prompt\": " << prompt << ", \"new_tokens\": " << new_tokens
        << ", \"copy_gbps\": " << bw_gbps << ", \"bound_ms\": " << bound_ms << ", \"cpp_eager_ms\": " << e
        << ", \"cpp_graph_ms\": " << g << ", \"cpp_graph_fused_ms\": " << gf << "}\n";
    }
    std::rename(tmp.c_str(), json_path.c_str());
  }
  return 0;
}
