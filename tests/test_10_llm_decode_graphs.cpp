// Chapter 10: chapter 09's decode step captured as one CUDA graph per token.
//   [ch10][cpu]       the chapter live on the CPU: eager only, the graph refused by name (exit 2);
//                     the eager lessons fail on chapter 09's cat trace and another chapter's recording
//   [ch10][gpu]       the graph computes what eager computes: teacher-forced logits within a stated
//                     bf16 tolerance (and a control that fails it); the chapter live on the GPU
//   [ch10][recorded]  the recordings in expected_output/{cpu,h200}/10_llm_decode_graphs
#include <torch/cuda.h>
#include <torch/types.h>
#undef CHECK
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>

#include "chapter_runner.hpp"
#include "llm.hpp"
#include "llm_graph.hpp"
#include "part2_traces.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using part2::judge;
using part2::status;
using wb::Status;

namespace {
const wb::Problem kTiny = wb::Problem::gemm(/*m=*/1, /*k=*/256, /*n=*/256, /*dtype_bytes=*/4);
const wb::Problem k1b = wb::Problem::gemm(/*m=*/1, /*k=*/2048, /*n=*/2048, /*dtype_bytes=*/2);
}  // namespace

TEST_CASE("chapter 10 CPU edition, live: eager passes, the graph is refused by name", "[ch10][cpu]") {
  const auto r =
      chapter_runner::run("10_llm_decode_graphs",
                          {"--device", "cpu", "--check", "--prompt", "64", "--compare-tokens", "4"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const auto eager = part2::variant_lessons(r, "eager");
  REQUIRE(eager.is_object());
  CHECK(eager["summary"]["failed"] == 0);
  CHECK(eager["summary"]["passed"].get<int>() >= 2);
  CHECK(!fs::exists(r.dir / "graph" / "lessons.json"));  // not run, so not counted
  // The eager lessons fail on another chapter's recording.
  const fs::path other = chapter_runner::recorded_trace("cpu", "07_geglu_mlp/eager");
  REQUIRE(!other.empty());
  const auto on_07 = judge(wb::read_trace(other), "10_llm_decode_graphs/eager", kTiny, "mlp_fwd");
  CHECK(on_07.passed == 0);  // every lesson a CPU trace can judge fails on it
  CHECK(!on_07.ok());

  const auto g =
      chapter_runner::run("10_llm_decode_graphs", {"--device", "cpu", "--variant", "graph"}, "cpu_graph");
  CHECK(g.rc == 2);
  CHECK_THAT(g.err, ContainsSubstring("CUDA"));
  const auto b =
      chapter_runner::run("10_llm_decode_graphs", {"--device", "cpu", "--batches", "1,x"}, "bad_batches");
  CHECK(b.rc == 2);
}

// bf16 tolerance: after 22 layers in bf16, two attention kernels (cuDNN's on the sliced cache in
// eager, another on the masked full cache in the graph) round differently; the logits must agree
// to 5% of the largest logit and a cosine of 0.995. The same step run eagerly (the same kernels)
// must agree far tighter. Greedy tokens are not compared: the logits are nearly flat.
TEST_CASE("the graph computes what eager computes: teacher-forced logits in bf16", "[ch10][gpu]") {
  if (!torch::cuda::is_available() || !llm::DecodeGraph::unavailable(torch::kCUDA).empty())
    SKIP("no CUDA device (or no CUDA in this build)");
  torch::NoGradGuard ng;
  for (const std::string name : {"tiny", "1b"}) {
    INFO(name);
    const llm::Config c = llm::config(name);
    const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
    const int64_t P = 512, N = 16, cap = P + N + 8;
    const llm::Model m(c, o, 0, cap);
    const torch::Tensor prompt = llm::random_prompt(c, 1, P, 1, torch::kCUDA);
    const torch::Tensor forced = llm::random_prompt(c, 1, N, 2, torch::kCUDA);
    auto kv_e = llm::KvCache::preallocated(c, 1, cap, o), kv_m = llm::KvCache::preallocated(c, 1, cap, o);
    auto kv_g = llm::KvCache::preallocated(c, 1, cap, o);
    llm::DecodeGraph g(m, kv_g, 1);  // capture first, then prefill
    m.prefill(prompt, kv_e);
    m.prefill(prompt, kv_m);
    m.prefill(prompt, kv_g);
    const auto pos = torch::empty({1}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
    g.set(forced.narrow(1, 0, 1), P);
    std::vector<torch::Tensor> eager, masked, graph;
    for (int64_t i = 0; i < N; ++i) {
      const torch::Tensor tok = forced.narrow(1, i, 1);
      eager.push_back(m.decode(tok, P + i, kv_e));
      pos.fill_(P + i);
      masked.push_back(m.decode_static(tok, pos, kv_m));
      g.set_token(tok);
      g.replay();
      graph.push_back(g.logits().clone());
    }
    const auto eg = llm::compare_logits(torch::stack(eager), torch::stack(graph));
    const auto mg = llm::compare_logits(torch::stack(masked), torch::stack(graph));
    WARN(name << ": eager vs graph: rel " << eg.rel << " cosine " << eg.cosine << " argmax "
              << eg.argmax_agree);
    WARN(name << ": masked eager vs graph: rel " << mg.rel << " cosine " << mg.cosine);
    CHECK(eg.rel <= 0.05);
    CHECK(eg.cosine >= 0.995);
    // The same ops, but not always the same kernels: inside a capture cuBLAS runs without its
    // eager workspace and may pick another GEMM kernel (another summation order). bf16 keeps 8
    // bits (2^-8 = 0.4% per rounding), so a few logits of 22 layers differ at the 1% level (the
    // H200 showed 1.1% at 1b): 2% still fails the control below (one token off: > 5%).
    CHECK(mg.rel <= 0.02);
    CHECK(mg.cosine >= 0.9999);
    // The control: logits one token off fail the same tolerance.
    const auto off =
        llm::compare_logits(torch::stack(eager).narrow(0, 1, N - 1), torch::stack(graph).narrow(0, 0, N - 1));
    CHECK(off.rel > 0.05);
    CHECK(off.cosine < 0.995);
    // The graph's greedy next token is its logits' argmax.
    CHECK(torch::equal(g.token().view({-1}), g.logits().argmax(-1)));
    // The first fusion step computes the same logits, within the same tolerance.
    llm::Model mf(c, o, 0, cap);
    mf.set_fused(true);
    auto kv_f = llm::KvCache::preallocated(c, 1, cap, o);
    llm::DecodeGraph gf(mf, kv_f, 1);
    mf.prefill(prompt, kv_f);
    gf.set(forced.narrow(1, 0, 1), P);
    std::vector<torch::Tensor> fused;
    for (int64_t i = 0; i < N; ++i) {
      gf.set_token(forced.narrow(1, i, 1));
      gf.replay();
      fused.push_back(gf.logits().clone());
    }
    const auto ef = llm::compare_logits(torch::stack(eager), torch::stack(fused));
    WARN(name << ": eager vs fused graph: rel " << ef.rel << " cosine " << ef.cosine);
    CHECK(ef.rel <= 0.05);
    CHECK(ef.cosine >= 0.995);
  }
}

TEST_CASE("chapter 10 on the GPU, live: eager and graph pass their lessons", "[ch10][gpu]") {
  const auto r = chapter_runner::run_gpu("10_llm_decode_graphs", {"--check", "--batches", "1,8"}, "gpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  for (const char* v : {"eager", "graph", "graph_fused"}) {
    INFO(v);
    const auto l = part2::variant_lessons(r, v);
    REQUIRE(l.is_object());
    CHECK(l["summary"]["failed"] == 0);
  }
  // The graph's trace fails the eager lessons and back.
  const wb::Trace e = wb::read_trace(r.dir / "eager" / "trace.json"),
                  g = wb::read_trace(r.dir / "graph" / "trace.json");
  CHECK(status(judge(g, "10_llm_decode_graphs/eager", k1b, "decode"), "work_per_step") == Status::Fail);
  CHECK(status(judge(e, "10_llm_decode_graphs/graph", k1b, "decode"), "work_per_step") == Status::Fail);
  CHECK(status(judge(e, "10_llm_decode_graphs/graph", k1b, "decode"), "overhead_bound") == Status::Fail);
  CHECK(status(judge(g, "10_llm_decode_graphs/graph_fused", k1b, "decode"), "work_per_step") == Status::Fail);
}

TEST_CASE("chapter 10's recordings pass their lessons; the graph's fail eager's", "[ch10][recorded][cpu]") {
  for (const std::string platform : {"cpu", "h200"}) {
    const wb::Problem p = platform == "cpu" ? kTiny : k1b;
    for (const std::string v : {"eager", "graph", "graph_fused"}) {
      if (platform == "cpu" && v != "eager") continue;  // the graphs need a GPU
      const fs::path t = chapter_runner::recorded_trace(platform, "10_llm_decode_graphs/" + v);
      if (t.empty()) {
        if (platform == "cpu") FAIL("no CPU recording of 10_llm_decode_graphs/" << v);
        WARN("not recorded yet: h200/10_llm_decode_graphs/" << v << " (the lead records it on the H200)");
        continue;
      }
      INFO(platform << " " << v);
      const wb::Trace tr = wb::read_trace(t);
      part2::all_pass(judge(tr, "10_llm_decode_graphs/" + v, p, "decode"));
      if (platform == "h200")
        CHECK(
            judge(tr, std::string("10_llm_decode_graphs/") + (v == "eager" ? "graph" : "eager"), p, "decode")
                .failed >= 1);
      if (platform == "h200" && v == "graph")
        CHECK(judge(tr, "10_llm_decode_graphs/graph_fused", p, "decode").failed >= 1);
    }
  }
  // Chapter 09's cat trace fails chapter 10's eager lessons (cat, no mask).
  const fs::path cat = chapter_runner::recorded_trace("cpu", "09_llm_prefill_decode/decode_cat");
  if (!cat.empty())
    CHECK(status(judge(wb::read_trace(cat), "10_llm_decode_graphs/eager", kTiny, "decode_cat"),
                 "dispatch_chain") == Status::Fail);
}
