// `inspect` and `table` on traces of public architectures the workbook did not write
// (tests/data/models/make_model_fixtures.py: a ResNet-style conv net, a transformer, an LSTM with
// an embedding bag; training steps with no annotations, torch.profiler with record_shapes,
// profile_memory, with_stack, with_flops), and on the H200 Python trace of an fp32 model
// (tests/data/python/cuda_shapes_flops). Each rule's text and figures must be true on them:
// the dtype from the trace, FLOPs against the kernels their ops launched, the phases of a step
// from autograd's and the optimizer's own events, a meaning that fits what the trace shows, and
// no chapter's ops in the general rules.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gunzip.hpp"  // gunzip_file
#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using wb::Status;

namespace {

const fs::path kModels = fs::path(WORKBOOK_ROOT) / "tests/data/models";
const fs::path kPython = fs::path(WORKBOOK_ROOT) / "tests/data/python";

// Every recorded model trace: the CPU ones committed, the H200 ones when they are there.
std::vector<std::string> model_recordings() {
  std::vector<std::string> out;
  for (const char* dev : {"cpu", "cuda"})
    for (const char* model : {"resnet", "transformer", "lstm"}) {
      const std::string rec = std::string(dev) + "_" + model;
      if (fs::exists(kModels / (rec + ".json.gz"))) out.push_back(rec);
    }
  return out;
}

// As the inspect tool does: no annotation named, so the trace's own are found.
wb::LessonsReport inspect(const wb::Trace& t) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.annotation = "";
  return wb::inspect_trace(m, o);
}

const wb::Fact& find(const wb::LessonsReport& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id);
  throw;
}

// Everything inspect prints for one fact, in one string.
std::string all_text(const wb::Fact& f) {
  std::string s = f.title + "\n" + f.pattern.text + "\n" + f.value + "\n" + f.verdict + "\n" + f.explanation;
  for (const auto& e : f.evidence) s += "\n" + e;
  return s;
}

}  // namespace

TEST_CASE("model traces: the three CPU architectures are committed", "[tools][cpu][models]") {
  for (const char* model : {"resnet", "transformer", "lstm"}) {
    INFO(model);
    const fs::path p = kModels / (std::string("cpu_") + model + ".json.gz");
    REQUIRE(fs::exists(p));
    CHECK(fs::file_size(p) < 1'000'000);  // small: the repository travels to the GPU machine
    const wb::Trace t = wb::read_trace(p);
    CHECK(t.record_shapes);
    CHECK(t.profile_memory);
    CHECK(t.with_stack);
    CHECK(t.with_flops);
  }
}

TEST_CASE("model traces: table prints Python's bytes", "[tools][cpu][models][table]") {
  const auto recs = model_recordings();
  REQUIRE(recs.size() >= 3);
  for (const auto& rec : recs) {
    const wb::Trace trace = wb::read_trace(kModels / (rec + ".json.gz"));
    const auto doc = nlohmann::json::parse(gunzip_file(kModels / (rec + ".tables.json.gz")));
    REQUIRE(doc.at("tables").size() >= 3);
    for (const auto& [key, text] : doc.at("tables").items()) {
      wb::TableOptions o;
      o.sort_by = key.substr(0, key.find('|'));
      o.row_limit = std::stoi(key.substr(key.find('|') + 1));
      const std::string ours = wb::key_averages_table(trace, o, {});
      INFO(rec << " " << key << "\npython:\n" << text.get<std::string>() << "\nours:\n" << ours);
      CHECK(ours == text.get<std::string>());
    }
  }
}

TEST_CASE("model traces: inspect's evidence names the trace's own ops, no chapter's",
          "[tools][cpu][models][inspect]") {
  for (const auto& rec : model_recordings()) {
    INFO(rec);
    const wb::Trace t = wb::read_trace(kModels / (rec + ".json.gz"));
    const wb::LessonsReport r = inspect(t);
    const auto ran = [&](std::string_view op) {
      return std::any_of(t.events.begin(), t.events.end(), [&](const wb::Event& e) { return e.name == op; });
    };
    for (const auto& f : r.facts) {
      const std::string text = all_text(f);
      INFO(f.id << ": " << text);
      // Chapter 07's gelu and mul appear only where the model ran them.
      for (const char* op : {"aten::gelu", "aten::mul "})
        if (!ran(std::string(op).substr(0, std::string(op).find(' '))))
          CHECK(text.find(op) == std::string::npos);
      CHECK(text.find("''") == std::string::npos);                      // no empty annotation in a rule
      CHECK(text.find("torch.compile's guards") == std::string::npos);  // eager models
    }
    const wb::Fact& work = find(r, "work_per_step");
    for (const auto& e : work.evidence) CHECK(e.find("aten::mul 0.0") == std::string::npos);
  }
}

TEST_CASE("model traces: forward, backward and optimizer found without annotations",
          "[tools][cpu][models][inspect]") {
  for (const auto& rec : model_recordings()) {
    INFO(rec);
    const wb::Trace t = wb::read_trace(kModels / (rec + ".json.gz"));
    const wb::LessonsReport r = inspect(t);
    const wb::Fact& act = find(r, "activations_held");
    INFO(all_text(act));
    REQUIRE(act.status != Status::NotApplicable);
    CHECK(act.data["forwards"] == 2);  // two active steps
    CHECK(act.data["forward_held_bytes"].get<int64_t>() > 0);
    CHECK_THAT(act.data["phases_from"].get<std::string>(), ContainsSubstring("evaluate_function"));
    const wb::Fact& opt = find(r, "optimizer_state");
    INFO(all_text(opt));
    REQUIRE(opt.status != Status::NotApplicable);
    CHECK(opt.data["optimizer_steps"] == 2);
    CHECK_THAT(opt.evidence.at(1), ContainsSubstring("Optimizer.step#"));
    // The optimizer's own ranges are not taken for the user's annotations.
    CHECK(r.options.annotation.find("Optimizer.") == std::string::npos);
    // With no annotation, the CPU time per step is read over the whole step.
    const wb::Fact& step = find(r, "step_cpu");
    CHECK(step.status != Status::NotApplicable);
    CHECK_THAT(step.value, ContainsSubstring("of the step's thread"));
  }
}

TEST_CASE("model traces: the wrong trace for the phases (no backward) says so",
          "[tools][cpu][models][inspect]") {
  // Chapter 01's Python trace runs forward only: no autograd events, no optimizer.
  const wb::Trace t = wb::read_trace(fs::path(WORKBOOK_ROOT) / "tests/data/lessons/py_cpu_64.json");
  const wb::LessonsReport r = inspect(t);
  for (const char* id : {"activations_held", "optimizer_state"}) {
    const wb::Fact& f = find(r, id);
    INFO(all_text(f));
    CHECK(f.status == Status::NotApplicable);
  }
}

TEST_CASE("H200 fp32 trace: throughput against the fp32 peak, the dtype from the trace",
          "[tools][cpu][models][inspect]") {
  // An fp32 MLP's training step on the H200 (cutlass_80_simt_sgemm, sgemm_largek: CUDA cores).
  const wb::Trace t = wb::read_trace(kPython / "cuda_shapes_flops.json.gz");
  const wb::LessonsReport r = inspect(t);
  const wb::Fact& tp = find(r, "throughput");
  INFO(all_text(tp));
  CHECK(tp.data["dtype"] == "fp32");
  CHECK(tp.data["peak_tflops"] == 67);  // not 989: fp32 on CUDA cores
  CHECK(tp.data["gemm_tflops"].get<double>() < 67);
  CHECK_THAT(tp.value, ContainsSubstring("fp32 on CUDA cores"));
  CHECK(tp.value.find("assumed") == std::string::npos);
  // The meaning of a step spent outside its ops: the autograd thread, not torch.compile.
  const wb::Fact& step = find(r, "step_cpu");
  INFO(all_text(step));
  CHECK(step.status == Status::Pass);
  CHECK(step.data["compiled"] == false);
  CHECK(step.data["autograd_threads"] == 1);
  CHECK_THAT(step.explanation, ContainsSubstring("autograd's own thread"));
  CHECK(step.explanation.find("torch.compile") == std::string::npos);
  // The CPU-share rule on a GPU trace names no empty annotation.
  const wb::Fact& shares = find(r, "cpu_shares");
  CHECK(shares.pattern.text.find("''") == std::string::npos);
}

TEST_CASE("conv FLOPs are set against the kernels the conv launched", "[tools][cpu][models][inspect]") {
  // A conv2d (2*1*8*8*3*3*4*8 = 36,864 flop) launches a layout transpose and an implicit-GEMM
  // kernel whose name holds no 'gemm'; an addmm launches one sgemm. Only the conv's own kernels
  // time its FLOPs: 36,864 flop in 2 us + 3 us; the addmm (2*2*4*8 = 128 flop) in 1 us.
  const std::string json = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1, "dur": 20, "args": {"External id": 2,
      "Input Dims": [[1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], []],
      "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
      "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 2, "args": {"External id": 2, "correlation": 10}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 2, "args": {"External id": 2, "correlation": 11}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 30, "dur": 10, "args": {"External id": 3,
      "Input Dims": [[8], [2, 4], [4, 8], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 31, "dur": 2, "args": {"External id": 3, "correlation": 12}},
    {"ph": "X", "cat": "kernel", "name": "nchwToNhwcKernel", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"External id": 2, "correlation": 10, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "implicit_convolve_fprop", "pid": 0, "tid": 7, "ts": 13, "dur": 3, "args": {"External id": 2, "correlation": 11, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "cutlass_80_simt_sgemm_128x64", "pid": 0, "tid": 7, "ts": 40, "dur": 1, "args": {"External id": 3, "correlation": 12, "device": 0, "stream": 7}}
  ]})";
  const fs::path p = fs::temp_directory_path() / "wb_conv_flops_trace.json";
  std::ofstream(p) << json;
  const wb::Trace t = wb::read_trace(p);
  fs::remove(p);
  const wb::LessonsReport r = inspect(t);
  const wb::Fact& tp = find(r, "throughput");
  INFO(all_text(tp));
  CHECK(tp.data["ops"] == "convolution");
  CHECK(tp.data["gemm_flops"] == 36864);
  CHECK(tp.data["gemm_us"] == 5);
  CHECK(tp.data["gemm_kernels"] == 2);
  CHECK(tp.data["peak_tflops"] == 67);
  CHECK_THAT(tp.evidence.at(0),
             ContainsSubstring("GEMM ops (fp32): 1 with 128 flop; the 1 kernels they launched ran 1"));
}
