// The post's torch.compile section on real traces ([ch05], torch-free): Python's own
// torch.profiler traces of the post's experiment (tools/python/chapter01_python.py --warmup
// [--compile [--mode reduce-overhead]], recorded by scripts/gpu/python_compile.sh into
// expected_output/<platform>/python/{eager,compile,reduce_overhead}/).
//   - each variant's spec (05_compiled_addmm/python_*) passes on its own recording;
//   - every compiled lesson that applies fails on the eager recording, and the eager lessons
//     fail on the compiled ones;
//   - CPU per step: each compiled run is above eager's (step_cpu with eager as its reference),
//     which eager against itself is not;
//   - `inspect --chapter` gives the same verdicts as check_lessons (the same rules).
// The recordings are required: a missing one fails, naming the file (the H200's come from one
// device call: scripts/gpu/python_compile.sh).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "claims.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::vector<std::string> kVariants = {"eager", "compile", "reduce_overhead"};

std::string spec_of(const std::string& variant) { return "05_compiled_addmm/python_" + variant; }

// The three recordings of a platform; a missing one fails the test with its path.
std::map<std::string, std::unique_ptr<claims::Recording>> load_all(const std::string& platform) {
  std::map<std::string, std::unique_ptr<claims::Recording>> out;
  for (const auto& v : kVariants) {
    std::string why;
    try {
      out[v] = claims::load(platform + "/python/" + v);
    } catch (const std::exception& e) {
      why = e.what();
    }
    INFO(platform << "/python/" << v << ": " << why
                  << (platform == "h200"
                          ? "\n  record it on the H200: scripts/gpu/python_compile.sh, then unpack "
                            "python.tgz into expected_output/h200/"
                          : ""));
    REQUIRE(why.empty());
  }
  return out;
}

wb::LessonsReport judge(const claims::Recording& r, const std::string& spec) {
  return wb::check_lessons(*r.model, *wb::find_lesson_spec(spec), r.options);
}

void check_platform(const std::string& platform) {
  const auto runs = load_all(platform);
  for (const auto& spec_variant : kVariants) {
    const std::string spec = spec_of(spec_variant);
    REQUIRE(wb::find_lesson_spec(spec) != nullptr);
    // On its own recording: every lesson passes.
    const wb::LessonsReport own = judge(*runs.at(spec_variant), spec);
    INFO(platform << "/python/" << spec_variant << " judged by " << spec << "\n"
                  << wb::render_lessons(own, wb::Format::Text));
    CHECK(own.failed == 0);
    CHECK(own.ok());
    // On the other kind of run: none of its lessons that apply there holds.
    for (const auto& other : kVariants) {
      const bool eager_vs_compiled = (spec_variant == "eager") != (other == "eager");
      if (!eager_vs_compiled) continue;
      const wb::LessonsReport r = judge(*runs.at(other), spec);
      INFO(spec << " on " << platform << "/python/" << other << "\n"
                << wb::render_lessons(r, wb::Format::Text));
      CHECK(r.passed == 0);
      CHECK(r.failed >= 3);
    }
  }
  // CPU per step above eager's, with eager's recording as the reference; eager vs itself is not.
  // On the H200, reduce-overhead replays one CUDA graph per step and its CPU per step is back
  // near eager's (recorded 1.02x, compile's 2.33x): the post's question of which mode lowers the
  // CPU overhead. On the CPU there is no graph to replay, and it costs what compile does.
  for (const auto& v : kVariants) {
    wb::FactOptions o = runs.at(v)->options;
    o.reference = runs.at("eager")->model.get();
    o.reference_label = "eager";
    const wb::Fact f = wb::compute_fact("step_cpu", *runs.at(v)->model, o);
    INFO(platform << "/python/" << v << ": " << f.value);
    REQUIRE(f.data.contains("over_reference"));
    if (v == "eager")
      CHECK(f.data["over_reference"].get<double>() == 1.0);
    else if (v == "reduce_overhead" && platform != "cpu")
      CHECK(f.data["over_reference"].get<double>() <= 1.25);
    else
      CHECK(f.data["over_reference"].get<double>() >= 1.5);
  }
}

// inspect's verdicts for one recording and spec, as check_lessons gives them.
void check_inspect(const std::string& platform, const std::string& variant) {
  const fs::path dir = claims::expected_root() / platform / "python" / variant;
  const auto r = claims::load(platform + "/python/" + variant);
  const std::string spec = spec_of(variant);
  std::vector<std::string> args = {claims::recorded_file(dir, "trace.json").string(),
                                   "--chapter",
                                   spec,
                                   "--annotation",
                                   "matmul_add",
                                   "--size",
                                   std::to_string(r->options.problem.n),
                                   "--dtype",
                                   r->options.problem.dtype_bytes == 4 ? "fp32" : "bf16",
                                   "--format",
                                   "json"};
  const auto e = proc::run(proc::bin("inspect"), args);
  INFO(e.err);
  REQUIRE(e.code == 0);
  const wb::LessonsReport by_tool = wb::lessons_from_json(nlohmann::json::parse(e.out));
  const wb::LessonsReport here = judge(*r, spec);
  REQUIRE(by_tool.facts.size() == here.facts.size());
  for (size_t i = 0; i < here.facts.size(); ++i) {
    INFO(here.facts[i].id << ": " << here.facts[i].verdict);
    CHECK(by_tool.facts[i].status == here.facts[i].status);
    CHECK(by_tool.facts[i].verdict == here.facts[i].verdict);
  }
  CHECK(by_tool.ok());
}

}  // namespace

TEST_CASE("python compiled traces (CPU): the compile lessons pass on them and fail on eager", "[ch05][cpu]") {
  check_platform("cpu");
}

TEST_CASE("python compiled traces (H200): the compile lessons pass on them and fail on eager",
          "[ch05][recordings][cpu]") {
  check_platform("h200");
}

TEST_CASE("python compiled traces: inspect judges them with the same rules", "[ch05][cpu]") {
  for (const auto& v : kVariants) check_inspect("cpu", v);
  for (const auto& v : kVariants) {
    const fs::path dir = claims::expected_root() / "h200" / "python" / v;
    INFO((dir / "trace.json").string() << " is missing: record it with scripts/gpu/python_compile.sh");
    REQUIRE(!claims::recorded_file(dir, "trace.json").empty());
    check_inspect("h200", v);
  }
}
