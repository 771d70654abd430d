#include "graph_capture_sweep.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <sstream>

#include "workbook/profiler.hpp"
#include "workbook/string_printf.hpp"

namespace wb10 {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Flags::Flags(wb::Chapter& ch) {
  Flags& fl = *this;
  ch.app()
      .add_option("--config", fl.config, "model: auto (1b on a GPU, tiny on a CPU) | tiny | 1b")
      ->check(CLI::IsMember({"auto", "tiny", "1b"}));
  ch.app().add_option("--prompt", fl.prompt, "prompt tokens (default 512)")->check(CLI::Range(1, 8192));
  ch.app()
      .add_option("--compare-tokens", fl.compare_tokens, "teacher-forced tokens compared (default 16)")
      ->check(CLI::Range(1, 1024));
  ch.app().add_option("--batches", fl.batches, "batch sizes of the timed sweep (default 1,8,64)");
}

std::vector<int64_t> parse_batches(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long long b = std::stoll(item, &used);
      if (used != item.size() || b < 1 || b > 1024) throw std::invalid_argument(item);
      out.push_back(b);
    } catch (const std::exception&) {
      throw wb::UsageError("--batches: '" + item + "' is not a batch size in 1..1024 (e.g. 1,8,64)");
    }
  }
  if (out.empty()) throw wb::UsageError("--batches: give at least one batch size (e.g. 1,8,64)");
  return out;
}

double copy_bandwidth_gbps(torch::Device d) {
  const auto src = torch::empty({int64_t{1} << 29}, torch::TensorOptions().dtype(torch::kBFloat16).device(d));
  auto dst = torch::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  wb::synchronize_device();
  const auto t0 = std::chrono::steady_clock::now();
  const int n = 10;
  for (int i = 0; i < n; ++i) dst.copy_(src);
  wb::synchronize_device();
  return 2.0 * static_cast<double>(src.nbytes()) * n / (ms_since(t0) * 1e-3) / 1e9;
}

void compare_to_eager(wb::Run& run, const llm::Model& model, const llm::Config& cfg,
                      const torch::Tensor& prompt, int64_t batch, int64_t capacity, const Flags& fl,
                      const std::string& no_graph) {
  const torch::Tensor forced = llm::random_prompt(cfg, batch, fl.compare_tokens, /*seed=*/2, run.device());
  auto kv_e = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
  model.prefill(prompt, kv_e);
  std::vector<torch::Tensor> eager, other;
  for (int64_t i = 0; i < fl.compare_tokens; ++i)
    eager.push_back(model.decode(forced.narrow(1, i, 1), fl.prompt + i, kv_e));  // chapter 09's step
  auto kv_o = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
  std::string what;
  if (no_graph.empty()) {
    llm::DecodeGraph g(model, kv_o, batch);
    model.prefill(prompt, kv_o);
    g.set(forced.narrow(1, 0, 1), fl.prompt);
    for (int64_t i = 0; i < fl.compare_tokens; ++i) {
      g.set_token(forced.narrow(1, i, 1));  // teacher forcing: the position advances in the graph
      g.replay();
      other.push_back(g.logits().clone());
    }
    what = "CUDA graph replay";
  } else {
    model.prefill(prompt, kv_o);
    const auto pos = torch::empty({1}, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
    for (int64_t i = 0; i < fl.compare_tokens; ++i) {
      pos.fill_(fl.prompt + i);
      other.push_back(model.decode_static(forced.narrow(1, i, 1), pos, kv_o));
    }
    what = "the graph's step run eagerly (no CUDA graph here: " + no_graph + ")";
  }
  const llm::LogitsMatch m = llm::compare_logits(torch::stack(eager), torch::stack(other));
  run.say(
      wb::string_printf("Teacher-forced logits, %lld tokens: chapter 09's eager step vs %s:\n"
                        "  max |diff| %.4g = %.3g of the largest logit %.3g; cosine %.6f; "
                        "greedy argmax agrees on %.1f%% of positions\n",
                        static_cast<long long>(fl.compare_tokens), what.c_str(), m.max_abs_diff, m.rel,
                        m.max_abs, m.cosine, 100 * m.argmax_agree));
}

double batch_sweep(wb::Run& run, llm::Model& model, const llm::Config& cfg, const Flags& fl,
                   const std::vector<int64_t>& batches, int64_t batch, int64_t capacity, double read_gb,
                   const std::string& no_graph) {
  const double bw = run.on_cuda() ? copy_bandwidth_gbps(run.device()) : 0;
  const int timed = kTimed;
  const int64_t prompt_len = fl.prompt;
  for (const int64_t b : run.on_cuda() ? batches : std::vector<int64_t>{batch}) {
    auto kv = llm::KvCache::preallocated(cfg, b, capacity, run.options());
    const auto tok = torch::zeros({b, 1}, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
    const auto pos =
        torch::full({1}, prompt_len, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
    // The cache is not prefilled: attention reads the same rows either way (the mask).
    for (int i = 0; i < 3; ++i) model.decode_static(tok, pos, kv);
    wb::synchronize_device();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < timed; ++i) model.decode_static(tok, pos, kv);
    wb::synchronize_device();
    const double eager_ms = ms_since(t0) / timed;
    std::string line =
        wb::string_printf("batch %3lld: eager %.3f ms/step", static_cast<long long>(b), eager_ms);
    if (no_graph.empty()) {
      llm::DecodeGraph g(model, kv, b);
      g.set(tok, prompt_len);
      for (int i = 0; i < 3; ++i) g.replay();
      wb::synchronize_device();  // (warm-up: the positions run from the prompt's length on)
      t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < timed; ++i) g.replay();  // the position advances in the graph
      wb::synchronize_device();
      const double graph_ms = ms_since(t0) / timed;
      // The first fusion step (Model::set_fused), captured the same way.
      model.set_fused(true);
      double fused_ms = 0;
      {
        llm::DecodeGraph gf(model, kv, b);
        gf.set(tok, prompt_len);
        for (int i = 0; i < 3; ++i) gf.replay();
        wb::synchronize_device();
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < timed; ++i) gf.replay();
        wb::synchronize_device();
        fused_ms = ms_since(t0) / timed;
      }
      model.set_fused(false);
      const double bound_ms = read_gb / bw * 1e3;
      line += wb::string_printf(
          ", graph %.3f ms/step (%.1fx eager) = %.0f tokens/s, %.1f%% of the bound; "
          "graph_fused %.3f ms = %.0f tokens/s, %.1f%% of the bound (weight-read bound %.3f ms "
          "at %.0f GB/s copy)",
          graph_ms, eager_ms / graph_ms, 1e3 * b / graph_ms, 100 * bound_ms / graph_ms, fused_ms,
          1e3 * b / fused_ms, 100 * bound_ms / fused_ms, bound_ms, bw);
    } else {
      line += wb::string_printf(" = %.0f tokens/s (no graph here)", 1e3 * b / eager_ms);
    }
    run.say(line + "\n");
  }
  return bw;
}

std::string model_summary(const llm::Config& cfg, double read_gb) {
  return wb::string_printf("Model %s: %.2f M parameters; a decode step reads %.1f MB of weights\n",
                           cfg.name.c_str(), llm::parameters(cfg) / 1e6, read_gb * 1e3);
}

std::string napkin(const llm::Config& cfg, int64_t batch, double read_gb, double bw) {
  return wb::string_printf(
      "Napkin math: %s decode, batch %lld: every GEMM has M = %lld; a step reads %.2f GB "
      "of weights%s\n",
      cfg.name.c_str(), static_cast<long long>(batch), static_cast<long long>(batch), read_gb,
      bw > 0 ? wb::string_printf(": %.3f ms at the measured %.0f GB/s", read_gb / bw * 1e3, bw).c_str() : "");
}

std::unique_ptr<llm::DecodeGraph> capture(llm::Model& model, llm::KvCache& kv, const torch::Tensor& prompt,
                                          int64_t batch, int64_t prompt_len, bool fused) {
  if (fused) model.set_fused(true);  // RMSNorm as one op, RoPE on q and k at once, residuals in the GEMMs
  auto g = std::make_unique<llm::DecodeGraph>(model, kv, batch);
  model.prefill(prompt, kv);
  g->set(prompt.narrow(1, prompt_len - 1, 1), prompt_len);
  if (fused) model.set_fused(false);
  return g;
}

Graphs::Graphs(wb::Run& run, llm::Model& model, const llm::Config& cfg, const torch::Tensor& prompt,
               int64_t batch, int64_t capacity, int64_t prompt_len, const std::string& no_graph)
    : kv_g(llm::KvCache::preallocated(cfg, batch, capacity, run.options())),
      kv_f(llm::KvCache::preallocated(cfg, batch, capacity, run.options())) {
  if (no_graph.empty() && run.wants("graph")) graph = capture(model, kv_g, prompt, batch, prompt_len, false);
  if (no_graph.empty() && run.wants("graph_fused"))
    graph_fused = capture(model, kv_f, prompt, batch, prompt_len, /*fused=*/true);
  if (!no_graph.empty() && (run.wants("graph") || run.wants("graph_fused")))
    run.say("==== graph, graph_fused: not run: " + no_graph + " (their lessons are not judged here)\n");
}

}  // namespace wb10
