#include "timed_generation.hpp"

#include <CLI/CLI.hpp>  // the chapter's own flags

#include <algorithm>
#include <chrono>
#include <utility>

#include "workbook/profiler.hpp"
#include "workbook/string_printf.hpp"

namespace wb09 {

void add_flags(wb::Chapter& ch, Flags& fl) {
  ch.app()
      .add_option("--config", fl.config, "model: auto (1b on a GPU, tiny on a CPU) | tiny | 1b")
      ->check(CLI::IsMember({"auto", "tiny", "1b"}));
  ch.app().add_option("--prompt", fl.prompt, "prompt tokens (default 512)")->check(CLI::Range(1, 8192));
  ch.app()
      .add_option("--new-tokens", fl.new_tokens, "tokens generated in the timed run (default 64)")
      ->check(CLI::Range(1, 4096));
}

std::string napkin(const llm::Config& c, int64_t batch, int64_t prompt, int dtype_bytes) {
  const double params = static_cast<double>(llm::parameters(c));
  const double read = static_cast<double>(llm::parameters_read_per_token(c)) * dtype_bytes;
  const double flop_layer = llm::prefill_flop_per_layer(c, batch * prompt);
  using ll = long long;
  return wb::string_printf(
      "Napkin math (%s: dim %lld, %lld layers, %lld heads, %lld KV heads, MLP %lld, vocab %lld):\n"
      "  parameters %.2f M = %.1f MB of weights at %d bytes each\n"
      "  prefill of %lld x %lld tokens: %.2f GFLOP per layer (GEMMs 2*m*k*n + causal attention), "
      "%.1f GFLOP for the model\n"
      "  decode: every GEMM has M = %lld rows; each token reads the weights once: %.1f MB "
      "(all but the embedding)\n",
      c.name.c_str(), ll(c.dim), ll(c.layers), ll(c.heads), ll(c.kv_heads), ll(c.mlp), ll(c.vocab),
      params / 1e6, params * dtype_bytes / 1e6, dtype_bytes, ll(batch), ll(prompt), flop_layer / 1e9,
      (flop_layer * c.layers + 2.0 * batch * c.dim * c.vocab) / 1e9, ll(batch), read / 1e6);
}

namespace {
// One generation: the prefill, then new_tokens - 1 decode steps at positions prompt .. prompt +
// new_tokens - 2. Returns {prefill ms, decode ms per token}.
std::pair<double, double> timed_generation(const llm::Model& model, const torch::Tensor& prompt,
                                           llm::KvCache& kv, const Flags& fl) {
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  wb::synchronize_device();
  const auto t0 = clock::now();
  torch::Tensor next = model.prefill(prompt, kv).argmax(-1, true);  // rewrites rows 0..prompt-1
  wb::synchronize_device();
  const auto t1 = clock::now();
  for (int64_t i = 0; i + 1 < fl.new_tokens; ++i)
    next = model.decode(next, fl.prompt + i, kv).argmax(-1, true);
  wb::synchronize_device();
  const auto t2 = clock::now();
  return {ms(t0, t1), ms(t1, t2) / static_cast<double>(std::max<int64_t>(1, fl.new_tokens - 1))};
}

}  // namespace

void time_generation(wb::Run& run, const llm::Model& model, const llm::Config& cfg,
                     const torch::Tensor& prompt, int64_t batch, int64_t capacity, const Flags& fl) {
  auto kv = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
  model.generate(prompt, 2, kv);  // warm-up: cuBLAS handles, kernel choices
  // Twice over the same positions: the first pass meets each key length (prompt + i) for the
  // first time, the second has seen them all. What differs is one-time work per new shape.
  const auto [prefill_ms, first_ms] = timed_generation(model, prompt, kv, fl);
  const auto [prefill2_ms, per_token_ms] = timed_generation(model, prompt, kv, fl);
  const double flop = llm::prefill_flop_per_layer(cfg, batch * fl.prompt) * cfg.layers;
  const double best_prefill = std::min(prefill_ms, prefill2_ms);
  using ll = long long;
  if (fl.new_tokens < 2) {  // a prefill, no decode step to time
    run.say(wb::string_printf(
        "Timed, unprofiled: prefill %.2f ms (%.3g TFLOP/s achieved); no decode step (--new-tokens 1)\n",
        best_prefill, flop / (best_prefill * 1e-3) / 1e12));
    return;
  }
  run.say(wb::string_printf(
      "Timed, unprofiled: prefill %.2f ms (%.3g TFLOP/s achieved); decode %.3f ms per token = %.0f tokens/s "
      "at batch %lld\n"
      "  (positions %lld..%lld, decoded twice; that is the second pass. The first, where each key length "
      "was new, took %.3f ms per token)\n",
      best_prefill, flop / (best_prefill * 1e-3) / 1e12, per_token_ms, 1e3 * batch / per_token_ms, ll(batch),
      ll(fl.prompt), ll(fl.prompt + fl.new_tokens - 2), first_ms));
}

}  // namespace wb09
