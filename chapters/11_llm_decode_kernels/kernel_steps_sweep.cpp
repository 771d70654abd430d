#include "kernel_steps_sweep.hpp"

#include <CLI/CLI.hpp>

#include <chrono>

#include "workbook/profiler.hpp"
#include "workbook/string_printf.hpp"

namespace wb11 {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

llmk::Step step_of(const std::string& name) {
  for (auto s : {llmk::Step::Gemv, llmk::Step::Fused, llmk::Step::Attention, llmk::Step::Overlap})
    if (name == llmk::step_name(s)) return s;
  throw std::invalid_argument("no kernel step named '" + name + "'");
}

double copy_bandwidth_gbps(torch::Device d) {
  const auto src = torch::empty({int64_t{1} << 29}, torch::TensorOptions().dtype(torch::kBFloat16).device(d));
  auto dst = torch::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  wb::synchronize_device();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) dst.copy_(src);
  wb::synchronize_device();
  return 2.0 * static_cast<double>(src.nbytes()) * 10 / (ms_since(t0) * 1e-3) / 1e9;
}

}  // namespace

Flags::Flags(wb::Chapter& ch) {
  ch.app().get_option("--size")->description("not used here: --config picks the model");
  ch.app()
      .add_option("--config", config, "model: auto (1b on a GPU, tiny on a CPU) | tiny | 1b")
      ->check(CLI::IsMember({"auto", "tiny", "1b"}));
  ch.app().add_option("--prompt", prompt, "prompt tokens (default 512)")->check(CLI::Range(1, 1900));
  ch.app()
      .add_option("--compare-tokens", compare_tokens, "teacher-forced tokens compared (default 16)")
      ->check(CLI::Range(1, 64));
}

std::unique_ptr<Variant> make_variant(wb::Run& run, llm::Model& model, const torch::Tensor& prompt,
                                      int64_t capacity, const std::string& name) {
  auto v = std::make_unique<Variant>();
  v->name = name;
  v->kv =
      std::make_unique<llm::KvCache>(llm::KvCache::preallocated(model.config(), 1, capacity, run.options()));
  const int64_t P = prompt.size(1);
  const torch::Tensor last = prompt.narrow(1, P - 1, 1);
  if (name == "graph_fused") {  // chapter 10's last step: capture first, then prefill
    model.set_fused(true);
    v->graph = std::make_unique<llm::DecodeGraph>(model, *v->kv, 1);
    model.prefill(prompt, *v->kv);
    v->graph->set(last, P);
    model.set_fused(false);
    v->token = [g = v->graph.get()] { g->replay(); };
    return v;
  }
  v->decoder = std::make_unique<llmk::Decoder>(model, *v->kv, step_of(name));
  if (run.on_cuda()) v->decoder->capture();
  model.prefill(prompt, *v->kv);
  v->decoder->set(last, P);
  if (run.on_cuda())
    v->token = [d = v->decoder.get()] { d->replay(); };
  else
    v->token = [d = v->decoder.get()] { d->run(); };  // the ATen equivalents, eagerly
  return v;
}

void compare_to_eager(wb::Run& run, llm::Model& model, const torch::Tensor& prompt, int64_t capacity,
                      const Flags& fl) {
  const llm::Config& c = model.config();
  const int64_t P = prompt.size(1), n = fl.compare_tokens;
  const torch::Tensor forced = llm::random_prompt(c, 1, n, /*seed=*/2, run.device());
  auto kv_e = llm::KvCache::preallocated(c, 1, capacity, run.options());
  model.prefill(prompt, kv_e);
  std::vector<torch::Tensor> eager, mine;
  for (int64_t i = 0; i < n; ++i) eager.push_back(model.decode(forced.narrow(1, i, 1), P + i, kv_e));
  auto kv_d = llm::KvCache::preallocated(c, 1, capacity, run.options());
  llmk::Decoder d(model, kv_d, llmk::Step::Overlap);
  if (run.on_cuda()) d.capture();
  model.prefill(prompt, kv_d);
  d.set(forced.narrow(1, 0, 1), P);
  for (int64_t i = 0; i < n; ++i) {
    d.set_token(forced.narrow(1, i, 1));  // teacher forcing: the position advances in the step
    if (run.on_cuda())
      d.replay();
    else
      d.run();
    mine.push_back(d.logits().clone());
  }
  const llm::LogitsMatch m = llm::compare_logits(torch::stack(eager), torch::stack(mine));
  const std::string why = llmk::kernels_unavailable(run.device(), run.options().dtype().toScalarType());
  run.say(wb::string_printf(
      "Teacher-forced logits, %lld tokens: chapter 09's eager step vs the last kernel step (%s):\n"
      "  max |diff| %.4g = %.3g of the largest logit %.3g; cosine %.6f; argmax agrees on %.1f%%\n",
      static_cast<long long>(n), why.empty() ? "hand-written kernels, one CUDA graph" : why.c_str(),
      m.max_abs_diff, m.rel, m.max_abs, m.cosine, 100 * m.argmax_agree));
}

double timed_sweep(wb::Run& run, llm::Model& model, const torch::Tensor& prompt, int64_t capacity,
                   double read_gb) {
  const double bw = run.on_cuda() ? copy_bandwidth_gbps(run.device()) : 0;
  const double bound_ms = bw > 0 ? read_gb / bw * 1e3 : 0;
  double previous = 0;
  for (const char* name : {"graph_fused", "gemv", "fused", "attention", "overlap"}) {
    if (!run.wants(name) || (!run.on_cuda() && std::string(name) == "graph_fused")) continue;
    auto v = make_variant(run, model, prompt, capacity, name);
    for (int i = 0; i < 3; ++i) v->token();
    wb::synchronize_device();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTimed; ++i) v->token();
    wb::synchronize_device();
    const double ms = ms_since(t0) / kTimed;
    std::string line = wb::string_printf("timed, %d tokens: %-11s %.3f ms/token = %.0f tokens/s", kTimed,
                                         name, ms, 1e3 / ms);
    if (bound_ms > 0)
      line += wb::string_printf(", %.1f%% of the %.3f ms bound", 100 * bound_ms / ms, bound_ms);
    if (previous > 0) line += wb::string_printf(" (%.2fx the step before)", previous / ms);
    run.say(line + "\n");
    previous = ms;
  }
  return bw;
}

std::string napkin(const llm::Config& c, int64_t dtype_bytes, double read_gb, double bw) {
  auto mb = [&](double n, double k) { return n * k * static_cast<double>(dtype_bytes) / 1e6; };
  auto at = [&](double megabytes) {
    return bw > 0 ? wb::string_printf(" = %.2f us", megabytes * 1e6 / (bw * 1e9) * 1e6) : std::string();
  };
  const double qkv = mb(c.qkv_out(), c.dim), o = mb(c.dim, c.dim), gu = mb(2 * c.mlp, c.dim),
               dn = mb(c.dim, c.mlp), lm = mb(c.vocab, c.dim);
  return wb::string_printf(
      "Napkin math (%s, batch 1, %lld-byte weights%s): per layer the GEMVs read qkv %.1f MB%s, o %.1f MB%s, "
      "gate_up %.1f MB%s, "
      "down %.1f MB%s; the LM head %.1f MB%s once per token. A token reads %.3f GB%s.\n",
      c.name.c_str(), static_cast<long long>(dtype_bytes),
      bw > 0 ? wb::string_printf(", at the measured %.0f GB/s copy", bw).c_str() : "", qkv, at(qkv).c_str(),
      o, at(o).c_str(), gu, at(gu).c_str(), dn, at(dn).c_str(), lm, at(lm).c_str(), read_gb,
      bw > 0 ? wb::string_printf(" = %.3f ms", read_gb / bw * 1e3).c_str() : "");
}

}  // namespace wb11
