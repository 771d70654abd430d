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
#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <chrono>
#include <sstream>

#include "llm.hpp"
#include "llm_graph.hpp"
#include "workbook/chapter.hpp"
#include "workbook/profiler.hpp"

namespace {

struct Flags {
  std::string config = "auto";
  int64_t prompt = 512, compare_tokens = 16;
  std::string batches = "1,8,64";
};

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

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Device copy bandwidth (read + write bytes / time) of a 1 GiB copy: the bound's denominator.
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

}  // namespace

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
  Flags fl;
  ch.app()
      .add_option("--config", fl.config, "model: auto (1b on a GPU, tiny on a CPU) | tiny | 1b")
      ->check(CLI::IsMember({"auto", "tiny", "1b"}));
  ch.app().add_option("--prompt", fl.prompt, "prompt tokens (default 512)")->check(CLI::Range(1, 8192));
  ch.app()
      .add_option("--compare-tokens", fl.compare_tokens, "teacher-forced tokens compared (default 16)")
      ->check(CLI::Range(1, 1024));
  ch.app().add_option("--batches", fl.batches, "batch sizes of the timed sweep (default 1,8,64)");

  return ch.main(argc, argv, [&](wb::Run& run) {
    torch::NoGradGuard inference;
    const std::vector<int64_t> batches = parse_batches(fl.batches);
    const std::string no_graph = llm::DecodeGraph::unavailable(run.device());
    run.refuse("graph", no_graph);  // --variant graph on a CPU: exit 2, before any work
    run.refuse("graph_fused", no_graph);
    const llm::Config cfg = llm::config(fl.config == "auto" ? (run.on_cuda() ? "1b" : "tiny") : fl.config);
    const int64_t batch = run.config().batch, steps = run.schedule().total_steps();
    const int timed = 32;  // timed steps per batch size in the sweep
    const int64_t capacity = fl.prompt + std::max<int64_t>({steps, fl.compare_tokens, timed + 3}) + 8;
    llm::Model model(cfg, run.options(), /*seed=*/0, capacity);
    const torch::Tensor prompt = llm::random_prompt(cfg, batch, fl.prompt, /*seed=*/1, run.device());
    const double read_gb = static_cast<double>(llm::parameters_read_per_token(cfg)) * run.dtype_bytes() / 1e9;
    run.say(llm::strf("Model %s: %.2f M parameters; a decode step reads %.1f MB of weights\n",
                      cfg.name.c_str(), llm::parameters(cfg) / 1e6, read_gb * 1e3));

    // ---- the graph computes what eager computes: teacher-forced logits -----------------
    {
      const torch::Tensor forced =
          llm::random_prompt(cfg, batch, fl.compare_tokens, /*seed=*/2, run.device());
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
          llm::strf("Teacher-forced logits, %lld tokens: chapter 09's eager step vs %s:\n"
                    "  max |diff| %.4g = %.3g of the largest logit %.3g; cosine %.6f; "
                    "greedy argmax agrees on %.1f%% of positions\n",
                    static_cast<long long>(fl.compare_tokens), what.c_str(), m.max_abs_diff, m.rel, m.max_abs,
                    m.cosine, 100 * m.argmax_agree));
    }

    // ---- timed, unprofiled: eager vs graph per token, the batch sweep ------------------
    const double bw = run.on_cuda() ? copy_bandwidth_gbps(run.device()) : 0;
    for (const int64_t b : run.on_cuda() ? batches : std::vector<int64_t>{batch}) {
      auto kv = llm::KvCache::preallocated(cfg, b, capacity, run.options());
      const auto tok = torch::zeros({b, 1}, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
      const auto pos =
          torch::full({1}, fl.prompt, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
      // The cache is not prefilled: attention reads the same rows either way (the mask).
      for (int i = 0; i < 3; ++i) model.decode_static(tok, pos, kv);
      wb::synchronize_device();
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < timed; ++i) model.decode_static(tok, pos, kv);
      wb::synchronize_device();
      const double eager_ms = ms_since(t0) / timed;
      std::string line = llm::strf("batch %3lld: eager %.3f ms/step", static_cast<long long>(b), eager_ms);
      if (no_graph.empty()) {
        llm::DecodeGraph g(model, kv, b);
        g.set(tok, fl.prompt);
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
          gf.set(tok, fl.prompt);
          for (int i = 0; i < 3; ++i) gf.replay();
          wb::synchronize_device();
          t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < timed; ++i) gf.replay();
          wb::synchronize_device();
          fused_ms = ms_since(t0) / timed;
        }
        model.set_fused(false);
        const double bound_ms = read_gb / bw * 1e3;
        line += llm::strf(
            ", graph %.3f ms/step (%.1fx eager) = %.0f tokens/s, %.1f%% of the bound; "
            "graph_fused %.3f ms = %.0f tokens/s, %.1f%% of the bound (weight-read bound %.3f ms "
            "at %.0f GB/s copy)",
            graph_ms, eager_ms / graph_ms, 1e3 * b / graph_ms, 100 * bound_ms / graph_ms, fused_ms,
            1e3 * b / fused_ms, 100 * bound_ms / fused_ms, bound_ms, bw);
      } else {
        line += llm::strf(" = %.0f tokens/s (no graph here)", 1e3 * b / eager_ms);
      }
      run.say(line + "\n");
    }

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
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = variant;
      ro.annotation = "decode";
      ro.problem = wb::Problem::gemm(/*m=*/batch, /*k=*/cfg.dim, /*n=*/cfg.dim, run.dtype_bytes());
      ro.napkin = [&](const std::string&) {
        return llm::strf(
            "Napkin math: %s decode, batch %lld: every GEMM has M = %lld; a step reads %.2f GB "
            "of weights%s\n",
            cfg.name.c_str(), static_cast<long long>(batch), static_cast<long long>(batch), read_gb,
            bw > 0 ? llm::strf(": %.3f ms at the measured %.0f GB/s", read_gb / bw * 1e3, bw).c_str() : "");
      };
      code = std::max(code, run.exit_code(run.report(prof.results().back(), ro)));
    };

    // The graphs are captured before the first profiler starts (as chapter 05's), each on its
    // own cache: capture first, then prefill (llm_graph.hpp).
    std::unique_ptr<llm::DecodeGraph> graph, graph_fused;
    auto kv_g = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
    auto kv_f = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
    if (no_graph.empty() && run.wants("graph")) {
      graph = std::make_unique<llm::DecodeGraph>(model, kv_g, batch);
      model.prefill(prompt, kv_g);
      graph->set(prompt.narrow(1, fl.prompt - 1, 1), fl.prompt);
    }
    if (no_graph.empty() && run.wants("graph_fused")) {
      model.set_fused(true);  // RMSNorm as one op, RoPE on q and k at once, residuals in the GEMMs
      graph_fused = std::make_unique<llm::DecodeGraph>(model, kv_f, batch);
      model.prefill(prompt, kv_f);
      graph_fused->set(prompt.narrow(1, fl.prompt - 1, 1), fl.prompt);
      model.set_fused(false);
    }
    if (!no_graph.empty() && (run.wants("graph") || run.wants("graph_fused")))
      run.say("==== graph, graph_fused: not run: " + no_graph + " (their lessons are not judged here)\n");

    if (run.wants("eager")) {
      auto kv = llm::KvCache::preallocated(cfg, batch, capacity, run.options());
      model.prefill(prompt, kv);
      const auto pos =
          torch::full({1}, fl.prompt, torch::TensorOptions().dtype(torch::kLong).device(run.device()));
      torch::Tensor next = prompt.narrow(1, fl.prompt - 1, 1).clone();
      profile_variant("eager", [&] {
        next = model.decode_static(next, pos, kv).argmax(-1, true);
        pos.add_(1);
      });
    }
    if (graph) profile_variant("graph", [&] { graph->replay(); });  // token and position advance in the graph
    if (graph_fused) profile_variant("graph_fused", [&] { graph_fused->replay(); });
    return code;
  });
}
