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
#include <CLI/CLI.hpp>  // --batch

#include <algorithm>

#include "llm.hpp"
#include "timed_generation.hpp"  // the flags, the napkin math, the unprofiled timing
#include "workbook/chapter.hpp"
#include "workbook/profiler.hpp"
#include "workbook/string_printf.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"09_llm_prefill_decode", "Chapter 09: a small LLM, eager: prefill, then decode"};
  ch.defaults().schedule = "1,2,5,1";  // a step is one prefill, or one decoded token
  ch.app().get_option("--size")->description("not used here: --config picks the model");
  ch.app()
      .add_option("--batch", ch.defaults().batch, "sequences decoded together (default 1)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  ch.variants({"prefill", "decode", "decode_cat"}, "prefill | decode | decode_cat | all");
  wb09::Flags fl;  // --config, --prompt, --new-tokens
  wb09::add_flags(ch, fl);

  return ch.main(argc, argv, [&](wb::Run& run) {
    torch::NoGradGuard inference;
    const llm::Config cfg = llm::config(fl.config == "auto" ? (run.on_cuda() ? "1b" : "tiny") : fl.config);
    const int64_t batch = run.config().batch, steps = run.schedule().total_steps();
    if (steps > fl.new_tokens)
      throw wb::UsageError(wb::string_printf("--schedule runs %lld decode steps, more than --new-tokens %lld",
                                             static_cast<long long>(steps),
                                             static_cast<long long>(fl.new_tokens)));
    const int64_t capacity = fl.prompt + fl.new_tokens;
    const llm::Model model(cfg, run.options(), /*seed=*/0, capacity);
    const torch::Tensor prompt = llm::random_prompt(cfg, batch, fl.prompt, /*seed=*/1, run.device());
    run.say(wb09::napkin(cfg, batch, fl.prompt, run.dtype_bytes()));

    wb09::time_generation(run, model, cfg, prompt, batch, capacity, fl);  // unprofiled, timed

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
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = phase;
      ro.annotation = phase;
      ro.problem = wb::Problem::gemm(/*m=*/batch * (phase == "prefill" ? fl.prompt : 1), /*k=*/cfg.dim,
                                     /*n=*/cfg.dim, run.dtype_bytes());
      ro.napkin = [&](const std::string&) { return wb09::napkin(cfg, batch, fl.prompt, run.dtype_bytes()); };
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
