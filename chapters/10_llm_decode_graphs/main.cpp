// Chapter 10 -- chapter 09's decode step captured once as a CUDA graph, replayed per token.
//
//   build/bin/10_llm_decode_graphs                    eager and graph; 1b on a GPU, tiny on a CPU
//   build/bin/10_llm_decode_graphs --variant graph    one of them: eager | graph
//   build/bin/10_llm_decode_graphs --batches 1,8,64   the batch sweep (GPU: graph replays)
//
// Guess first: chapter 09's decode step launches about a thousand kernels per token and the
// GPU waits for the CPU. With one graph launch per token, how busy is the GPU, and how close do
// we get to the weight-read bound? Then look. Each variant is profiled into
// out/10_llm_decode_graphs/<variant>/ and judged by the lessons "10_llm_decode_graphs/<variant>":
//   eager  the graph-safe step run eagerly: static cache, position tensor, masked attention
//   graph  the same step captured once (llm_graph.hpp), one CUDAGraph::replay() per token
// Before profiling, the chapter checks that the graph computes what eager computes: the logits of
// the same token sequence (teacher forcing), within a stated bf16 tolerance.
#include <CLI/CLI.hpp>  // --batch

#include <algorithm>

#include "graph_capture_sweep.hpp"  // the flags, the logits check, the batch sweep, the napkin, capture
#include "llm.hpp"
#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"10_llm_decode_graphs", "Chapter 10: LLM decode as one CUDA graph per token"};
  ch.defaults().schedule = "1,2,5,1";  // a step is one decoded token
  ch.app().get_option("--size")->description("not used here: --config picks the model");
  ch.app()
      .add_option("--batch", ch.defaults().batch,
                  "sequences decoded together in the profiled run (default 1)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  ch.variants({"eager", "graph", "graph_fused"},
              "eager | graph | graph_fused | all (the graphs need a CUDA device)");
  wb10::Flags fl(ch);  // --config, --prompt, --compare-tokens, --batches

  return ch.main(argc, argv, [&](wb::Run& run) {
    torch::NoGradGuard inference;
    const std::vector<int64_t> batches = wb10::parse_batches(fl.batches);
    const std::string no_graph = llm::DecodeGraph::unavailable(run.device());
    for (const char* v : {"graph", "graph_fused"}) run.refuse(v, no_graph);  // on a CPU: exit 2, no work
    const llm::Config cfg = llm::config(fl.config == "auto" ? (run.on_cuda() ? "1b" : "tiny") : fl.config);
    const int64_t batch = run.config().batch, steps = run.schedule().total_steps();
    const int64_t capacity = fl.prompt + std::max<int64_t>({steps, fl.compare_tokens, wb10::kTimed + 3}) + 8;
    llm::Model model(cfg, run.options(), /*seed=*/0, capacity);
    const torch::Tensor prompt = llm::random_prompt(cfg, batch, fl.prompt, /*seed=*/1, run.device());
    const double read_gb = static_cast<double>(llm::parameters_read_per_token(cfg)) * run.dtype_bytes() / 1e9;
    run.say(wb10::model_summary(cfg, read_gb));

    // The graph computes what eager computes: teacher-forced logits, then the timed batch sweep.
    wb10::compare_to_eager(run, model, cfg, prompt, batch, capacity, fl, no_graph);
    const double bw = wb10::batch_sweep(run, model, cfg, fl, batches, batch, capacity, read_gb, no_graph);

    // ---- profiled: each variant, a step being one token ---------------------------------
    int code = 0;
    auto profile_variant = [&](const std::string& variant, const std::function<void()>& step) {
      wb::ProfilerOptions opts;
      opts.schedule = run.schedule();
      opts.cuda = run.on_cuda();
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a("decode");  // record_function("decode")
          step();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = variant;
      ro.annotation = "decode";
      ro.problem = wb::Problem::gemm(/*m=*/batch, /*k=*/cfg.dim, /*n=*/cfg.dim, run.dtype_bytes());
      ro.napkin = [&](const std::string&) { return wb10::napkin(cfg, batch, read_gb, bw); };
      code = std::max(code, run.exit_code(run.report(prof.results().back(), ro)));
    };

    // The graphs (graph_fused: Model::set_fused's ops) are captured before the first profiler
    // starts (as chapter 05's), each on its own cache: capture first, then prefill (llm_graph.hpp).
    const wb10::Graphs g(run, model, cfg, prompt, batch, capacity, fl.prompt, no_graph);

    if (run.wants("eager")) {
      auto kv = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
      model.prefill(prompt, kv);
      const auto pos = torch::full({1}, fl.prompt, torch::dtype(torch::kLong).device(run.device()));
      torch::Tensor next = prompt.narrow(1, fl.prompt - 1, 1).clone();
      profile_variant("eager", [&] {
        next = model.decode_static(next, pos, kv).argmax(-1, true);
        pos.add_(1);
      });
    }
    if (g.graph) profile_variant("graph", [&] { g.graph->replay(); });  // token, position: in the graph
    if (g.graph_fused) profile_variant("graph_fused", [&] { g.graph_fused->replay(); });
    return code;
  });
}
