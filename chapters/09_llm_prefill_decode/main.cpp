// Chapter 09 -- a small LLM, eager: prefill a 512-token prompt, then decode 64 tokens.
//
//   build/bin/09_llm_prefill_decode                       every phase; 1b on a GPU, tiny on a CPU
//   build/bin/09_llm_prefill_decode --variant decode      one of them: prefill | decode | decode_cat
//   build/bin/09_llm_prefill_decode --config tiny         the CI model on any device
//
// Guess first: a decode step multiplies one token by every weight of the model. Is it bound by
// FLOPs, by the weight bytes, or by something else? Then look. Each phase is profiled into
// out/09_llm_prefill_decode/<phase>/ and judged by the lessons "09_llm_prefill_decode/<phase>":
//   prefill     one step = the whole prompt through the model: big GEMMs, fused attention
//   decode      one step = one token, static (preallocated) KV cache written with index_copy_
//   decode_cat  one step = one token, the KV cache grown with torch::cat every token
// The model (llm.hpp) is a Llama-style decoder with random weights from a fixed seed.
#include <CLI/CLI.hpp>  // the chapter's own flags

#include <algorithm>
#include <chrono>

#include "llm.hpp"
#include "workbook/chapter.hpp"
#include "workbook/profiler.hpp"

namespace {

struct Flags {
  std::string config = "auto";
  int64_t prompt = 512, new_tokens = 64;
};

std::string napkin(const llm::Config& c, int64_t batch, int64_t prompt, int dtype_bytes) {
  const double params = static_cast<double>(llm::parameters(c));
  const double read = static_cast<double>(llm::parameters_read_per_token(c)) * dtype_bytes;
  const double flop_layer = llm::prefill_flop_per_layer(c, batch * prompt);
  using ll = long long;
  return llm::strf(
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

}  // namespace

int main(int argc, char** argv) {
  wb::Chapter ch{"09_llm_prefill_decode", "Chapter 09: a small LLM, eager: prefill, then decode"};
  ch.defaults().schedule = "1,2,5,1";  // a step is one prefill, or one decoded token
  ch.app().get_option("--size")->description("not used here: --config picks the model");
  ch.app()
      .add_option("--batch", ch.defaults().batch, "sequences decoded together (default 1)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  ch.variants({"prefill", "decode", "decode_cat"}, "prefill | decode | decode_cat | all");
  Flags fl;
  ch.app()
      .add_option("--config", fl.config, "model: auto (1b on a GPU, tiny on a CPU) | tiny | 1b")
      ->check(CLI::IsMember({"auto", "tiny", "1b"}));
  ch.app().add_option("--prompt", fl.prompt, "prompt tokens (default 512)")->check(CLI::Range(1, 8192));
  ch.app()
      .add_option("--new-tokens", fl.new_tokens, "tokens generated in the timed run (default 64)")
      ->check(CLI::Range(1, 4096));

  return ch.main(argc, argv, [&](wb::Run& run) {
    torch::NoGradGuard inference;
    const llm::Config cfg = llm::config(fl.config == "auto" ? (run.on_cuda() ? "1b" : "tiny") : fl.config);
    const int64_t batch = run.config().batch, steps = run.schedule().total_steps();
    if (steps > fl.new_tokens)
      throw wb::UsageError(llm::strf("--schedule runs %lld decode steps, more than --new-tokens %lld",
                                     static_cast<long long>(steps), static_cast<long long>(fl.new_tokens)));
    const int64_t capacity = fl.prompt + fl.new_tokens;
    const llm::Model model(cfg, run.options(), /*seed=*/0, capacity);
    const torch::Tensor prompt = llm::random_prompt(cfg, batch, fl.prompt, /*seed=*/1, run.device());
    run.say(napkin(cfg, batch, fl.prompt, run.dtype_bytes()));

    // ---- unprofiled: the whole generation, timed -------------------------------------------
    {
      auto kv = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
      model.generate(prompt, 2, kv);  // warm-up: cuBLAS handles, kernel choices
      wb::synchronize_device();
      auto t0 = std::chrono::steady_clock::now();
      torch::Tensor logits = model.prefill(prompt, kv);
      wb::synchronize_device();
      auto t1 = std::chrono::steady_clock::now();
      torch::Tensor next = logits.argmax(-1, true);
      for (int64_t i = 0; i + 1 < fl.new_tokens; ++i)
        next = model.decode(next, fl.prompt + i, kv).argmax(-1, true);
      wb::synchronize_device();
      auto t2 = std::chrono::steady_clock::now();
      const double prefill_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      const double per_token_ms =
          std::chrono::duration<double, std::milli>(t2 - t1).count() / static_cast<double>(fl.new_tokens - 1);
      const double flop = llm::prefill_flop_per_layer(cfg, batch * fl.prompt) * cfg.layers;
      run.say(
          llm::strf("Timed, unprofiled: prefill %.2f ms (%.3g TFLOP/s achieved); decode %.3f ms per "
                    "token = %.0f tokens/s at batch %lld\n",
                    prefill_ms, flop / (prefill_ms * 1e-3) / 1e12, per_token_ms, 1e3 * batch / per_token_ms,
                    static_cast<long long>(batch)));
    }

    // ---- profiled: each phase on its own, a step being one prefill or one token ---------
    int code = 0;
    auto profile_phase = [&](const std::string& phase, const std::function<void()>& step) {
      wb::ProfilerOptions opts;
      opts.schedule = run.schedule();
      opts.cuda = run.on_cuda();
      opts.with_flops = true;  // the GEMMs' FLOPs in the trace: achieved TFLOP/s per GEMM kernel
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a(phase);  // record_function("decode")
          step();
        }
        prof.step();
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = phase;
      ro.annotation = phase;
      ro.problem = wb::Problem::gemm(/*m=*/batch * (phase == "prefill" ? fl.prompt : 1), /*k=*/cfg.dim,
                                     /*n=*/cfg.dim, run.dtype_bytes());
      ro.napkin = [&](const std::string&) { return napkin(cfg, batch, fl.prompt, run.dtype_bytes()); };
      code = std::max(code, run.exit_code(run.report(prof.results().back(), ro)));
    };

    if (run.wants("prefill")) {
      auto kv = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
      profile_phase("prefill", [&] { model.prefill(prompt, kv); });  // rewrites rows 0..prompt-1
    }
    for (const bool cat : {false, true}) {
      const std::string phase = cat ? "decode_cat" : "decode";
      if (!run.wants(phase)) continue;
      auto kv = cat ? llm::KvCache::grown_by_cat(cfg, batch, run.options())
                    : llm::KvCache::preallocated(cfg, batch, capacity, run.options());
      torch::Tensor next = model.prefill(prompt, kv).argmax(-1, true);
      int64_t pos = fl.prompt;
      profile_phase(phase, [&] { next = model.decode(next, pos++, kv).argmax(-1, true); });
    }
    return code;
  });
}
