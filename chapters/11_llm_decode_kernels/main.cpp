// Chapter 11 -- chapter 10's decode graph rebuilt, one step at a time, from hand-written kernels.
//
//   build/bin/11_llm_decode_kernels                      every variant; 1b on a GPU, tiny on a CPU
//   build/bin/11_llm_decode_kernels --variant gemv       one of them
//
// Guess first: chapter 10's fused graph spends half of each token in ~450 kernels that are not
// GEMVs, and its cuBLAS GEMVs read at 61% of the copy rate. Which step pays most: our own GEMV,
// fusing the small kernels into it, our own attention, or overlapping the kernels? Then look.
// Each variant is profiled into out/11_llm_decode_kernels/<variant>/ and judged by the lessons
// "11_llm_decode_kernels/<variant>"; each is one step from models/llm_kernels:
//   graph_fused  chapter 10's last variant: cuBLAS GEMVs, ATen's small kernels, cuDNN attention
//   gemv         the five projections on our M = 1 GEMV (residual adds in its epilogue)
//   fused        + RMSNorm in the GEMVs' prologue, SwiGLU in gate_up's epilogue, RoPE + KV write
//   attention    + one-query split-K attention: six kernels per layer
//   overlap      + each GEMV streams its weights while the kernel before it finishes
// On a CPU (or without nvcc) the kernel steps run their ATen equivalents, eagerly; the chapter
// says why. Before profiling: teacher-forced logits against eager, then a timed sweep. After:
// the lessons across the steps (comparison.txt): GPU time per token, the read bound, GEMV GB/s.
#include <algorithm>

#include "kernel_steps_sweep.hpp"  // the flags, the logits check, the timed sweep, the napkin
#include "llm.hpp"
#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"11_llm_decode_kernels", "Chapter 11: LLM decode on hand-written kernels"};
  ch.defaults().schedule = "1,2,5,1";  // a step is one decoded token
  ch.variants({"graph_fused", "gemv", "fused", "attention", "overlap"},
              "graph_fused | gemv | fused | attention | overlap | all (graph_fused needs a CUDA device)");
  wb11::Flags fl(ch);  // --config, --prompt, --compare-tokens (and --size: not used)

  return ch.main(argc, argv, [&](wb::Run& run) {
    torch::NoGradGuard inference;
    run.refuse("graph_fused", llm::DecodeGraph::unavailable(run.device()));  // on a CPU: exit 2, no work
    const llm::Config cfg = llm::config(fl.config == "auto" ? (run.on_cuda() ? "1b" : "tiny") : fl.config);
    const int64_t steps = run.schedule().total_steps();
    const int64_t capacity = fl.prompt + std::max<int64_t>({steps, fl.compare_tokens, wb11::kTimed}) + 8;
    llm::Model model(cfg, run.options(), /*seed=*/0, capacity);
    const torch::Tensor prompt = llm::random_prompt(cfg, 1, fl.prompt, /*seed=*/1, run.device());
    const double read_gb = static_cast<double>(llm::parameters_read_per_token(cfg)) * run.dtype_bytes() / 1e9;
    const std::string why = llmk::kernels_unavailable(run.device(), run.options().dtype().toScalarType());
    if (!why.empty()) run.say("The kernel steps run their ATen equivalents here: " + why + "\n");

    wb11::compare_to_eager(run, model, prompt, capacity, fl);
    const double bw = wb11::timed_sweep(run, model, prompt, capacity, read_gb);  // napkin: in each report

    // ---- profiled: each variant, a step being one token ---------------------------------
    int code = 0;
    std::vector<wb::VariantRun> runs;  // for the lessons across variants: which step pays
    for (const std::string name : {"graph_fused", "gemv", "fused", "attention", "overlap"}) {
      if (!run.wants(name) || (name == "graph_fused" && !run.on_cuda())) continue;  // (refused above)
      auto v = wb11::make_variant(run, model, prompt, capacity, name);  // captured before profiling
      wb::ProfilerOptions opts;
      opts.schedule = run.schedule();
      opts.cuda = run.on_cuda();
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a("decode");  // record_function("decode")
          v->token();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = name;
      ro.annotation = "decode";
      ro.problem = wb::Problem::gemm(/*m=*/1, /*k=*/cfg.dim, /*n=*/cfg.dim, run.dtype_bytes());
      ro.napkin = [&](const std::string&) { return wb11::napkin(cfg, run.dtype_bytes(), read_gb, bw); };
      const wb::RunOutputs o = run.report(prof.results().back(), ro);
      runs.emplace_back().name = name;  // its trace, and the bytes a token reads at the copy rate
      runs.back().trace = o.trace_data;
      runs.back().bytes_per_step = read_gb * 1e9;
      runs.back().bandwidth_gbps = bw > 0 ? bw : -1;  // the copy rate the sweep measured
      runs.back().kernel_bytes = wb11::gemv_bytes(cfg, run.dtype_bytes());  // each GEMV's GB/s
      code = std::max(code, run.exit_code(o));
    }
    const std::string problem = cfg.name + ", batch 1, " + std::to_string(fl.prompt) + "-token prompt";
    return std::max(code, run.report_across(runs, "decode", problem));  // out/.../comparison.txt
  });
}
