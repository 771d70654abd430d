// The profiler wrapper, live on CPU (and on GPU when one is present).
#include <torch/jit.h>
#include <torch/types.h>
// c10's logging defines a glog-style CHECK that would shadow Catch2's.
#undef CHECK
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/profiler.hpp"
#include "workbook/rules.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("wb_test_profiler_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The lesson-01 loop, with a chosen schedule and step count.
std::vector<wb::CycleResult> run_loop(const wb::Schedule& s, int steps, torch::Device dev) {
  auto opts = torch::TensorOptions().device(dev);
  auto x = torch::randn({64, 64}, opts), w = torch::randn({64, 64}, opts), b = torch::randn({64, 64}, opts);
  wb::ProfilerOptions po;
  po.schedule = s;
  po.cuda = dev.is_cuda();
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < steps; ++i) {
    {
      wb::Annotation a("matmul_add");
      auto y = torch::add(torch::matmul(x, w), b);
    }
    prof.step();
  }
  prof.stop();
  return std::move(prof.results());
}

std::set<std::string> step_names(const wb::Trace& t) {
  std::set<std::string> s;
  for (const auto& e : t.events)
    if (e.name.rfind("ProfilerStep#", 0) == 0 && e.kind == wb::Kind::UserAnnotation) s.insert(e.name);
  return s;
}

// matmul_add > aten::matmul nesting, checked through the model's call tree.
bool matmul_nested_in_annotation(const wb::Trace& t) {
  wb::TraceModel m(t);
  auto matmuls = m.find("aten::matmul");
  if (matmuls.empty()) return false;
  for (auto i : matmuls) {
    auto p = m.parent(i);
    if (!p || m.at(*p).name != "matmul_add") return false;
  }
  return true;
}
}  // namespace

TEST_CASE("CPU smoke: wait=1 warmup=1 active=3 records ProfilerStep#2..#4 and the nesting",
          "[profiler][ch01][cpu]") {
  auto results = run_loop(wb::Schedule{1, 1, 3, 1, 0}, 5, torch::kCPU);
  REQUIRE(results.size() == 1);
  auto& r = results[0];
  CHECK(r.first_step == 2);
  CHECK(r.last_step == 4);
  const std::set<std::string> want{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"};
  CHECK(step_names(r.trace()) == want);

  // The Chrome trace on disk is valid JSON and holds the same steps.
  auto dir = temp_dir("smoke");
  auto path = dir / "trace.json";
  r.save_chrome_trace(path);
  CHECK_THROWS(r.save_chrome_trace(dir / "again.json"));  // Kineto serializes once
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("traceEvents"));
  for (const auto& p : fs::directory_iterator(dir))  // no temp file left behind
    CHECK(p.path().filename().string().find(".partial") == std::string::npos);

  auto disk = wb::read_trace(path);
  CHECK(step_names(disk) == step_names(r.trace()));
  CHECK(matmul_nested_in_annotation(disk));
  CHECK(matmul_nested_in_annotation(r.trace()));
  fs::remove_all(dir);
}

TEST_CASE("the nesting check fails when the annotation is missing", "[profiler][cpu]") {
  // Same loop without the annotation: aten::matmul's parent is the ProfilerStep, not matmul_add.
  auto x = torch::randn({8, 8});
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 0, 2, 1, 0};
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < 2; ++i) {
    auto y = torch::matmul(x, x);
    prof.step();
  }
  prof.stop();
  REQUIRE(prof.results().size() == 1);
  CHECK_FALSE(matmul_nested_in_annotation(prof.results()[0].trace()));
}

TEST_CASE("schedule 0,0,N still prepares before enabling (no crash) and records every step",
          "[profiler][cpu]") {
  auto results = run_loop(wb::Schedule{0, 0, 3, 1, 0}, 3, torch::kCPU);
  REQUIRE(results.size() == 1);
  const std::set<std::string> want{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"};
  CHECK(step_names(results[0].trace()) == want);
}

TEST_CASE("repeat=2 gives two cycles; repeat=0 cycles until the steps run out", "[profiler][cpu]") {
  auto two = run_loop(wb::Schedule{1, 1, 2, 2, 0}, 8, torch::kCPU);
  REQUIRE(two.size() == 2);
  const std::set<std::string> first{"ProfilerStep#2", "ProfilerStep#3"},
      second{"ProfilerStep#6", "ProfilerStep#7"};
  CHECK(step_names(two[0].trace()) == first);
  CHECK(step_names(two[1].trace()) == second);

  auto forever = run_loop(wb::Schedule{1, 0, 2, 0, 0}, 9, torch::kCPU);
  CHECK(forever.size() == 3);  // NRS NRS NRS
  // Stopping mid-cycle still saves (Python: RECORD -> exit = stop + trace_ready). As in
  // Python, the step opened by the last step() call (#2, empty) is closed inside the window.
  auto partial = run_loop(wb::Schedule{0, 0, 5, 1, 0}, 2, torch::kCPU);
  REQUIRE(partial.size() == 1);
  CHECK(partial[0].last_step == 2);
  const std::set<std::string> want{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"};
  CHECK(step_names(partial[0].trace()) == want);
}

TEST_CASE("repeat=0: the trailing cycle can be empty; last_nonempty() gives the last whole one",
          "[profiler][cpu][schedule]") {
  // schedule(wait=0, warmup=0, active=1) saves every step; the step the loop's last step() opens
  // (#3) is closed by stop() with nothing in it: a fourth, empty cycle, as in Python.
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 0, 1, 0};
  po.cuda = false;
  wb::Profiler prof(po);
  auto x = torch::randn({16, 16});
  prof.start();
  for (int i = 0; i < 3; ++i) {
    { auto y = torch::matmul(x, x); }
    prof.step();
  }
  prof.stop();
  REQUIRE(prof.results().size() == 4);
  CHECK(prof.results().back().first_step == 3);
  CHECK(prof.results().back().whole_steps == 0);
  CHECK(prof.results().back().trace().events.size() < prof.results()[2].trace().events.size());
  CHECK(prof.results()[2].whole_steps == 1);
  CHECK(prof.results().last_nonempty().first_step == 2);
  CHECK(wb::TraceModel(prof.results().last_nonempty().trace()).find("aten::matmul").size() == 1);
  // ProfilerOptions{}'s schedule is the chapters' window, not Python's record-everything default
  // (docs/profiler-in-cpp.md and profiler.hpp say so).
  CHECK(wb::ProfilerOptions{}.schedule == (wb::Schedule{1, 1, 3, 1}));
}

TEST_CASE("GPU: kernels are attributed and the window ends with a device synchronize",
          "[profiler][ch01][gpu]") {
  if (!wb::cuda_available()) SKIP("no CUDA device");
  auto results = run_loop(wb::Schedule{1, 1, 3, 1, 0}, 5, torch::kCUDA);
  REQUIRE(results.size() == 1);
  const auto& t = results[0].trace();
  int kernels = 0, syncs = 0;
  for (const auto& e : t.events) {
    if (e.kind == wb::Kind::Kernel) ++kernels;
    if (e.name == "cudaDeviceSynchronize") ++syncs;
  }
  CHECK(kernels == 6);  // one GEMM + one add per active step
  CHECK(syncs >= 1);    // sync-then-stop
}

TEST_CASE("a result saved after a later session still has its own events", "[profiler][cpu][gpu]") {
  // Kineto's exporter reads its session's CUPTI buffers, which the next session reuses: saving
  // cycle 1 after cycle 2 ran used to give kernels at ts 0 / dur 0 (seen on the H200). The
  // wrapper parks unsaved results to a temp file when a new session starts.
  const torch::Device dev = wb::cuda_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  auto first = run_loop(wb::Schedule{0, 0, 2, 1, 0}, 2, dev);
  auto second = run_loop(wb::Schedule{0, 0, 3, 1, 0}, 3, dev);  // another session, then save both
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  auto dir = temp_dir("two_sessions");
  second[0].save_chrome_trace(dir / "second.json");
  first[0].save_chrome_trace(dir / "first.json");
  for (const char* f : {"first.json", "second.json"}) {
    const wb::Trace t = wb::read_trace(dir / f);
    CAPTURE(f);
    CHECK(step_names(t).size() == (std::string(f) == "first.json" ? 2u : 3u));
    int kernels = 0, zero = 0;
    for (const auto& e : t.events)
      if (e.kind == wb::Kind::Kernel) {
        ++kernels;
        if (e.dur_ns == 0) ++zero;
      }
    if (dev.is_cuda()) CHECK(kernels > 0);
    CHECK(zero == 0);
  }
  int parked_left = 0;  // the parked temp files were moved into place, none left behind
  for (const auto& p : fs::directory_iterator(fs::temp_directory_path()))
    if (p.path().filename().string().rfind("wb-trace-" + std::to_string(::getpid()) + "-", 0) == 0)
      ++parked_left;
  CHECK(parked_left == 0);
  fs::remove_all(dir);
}

TEST_CASE("with_flops: the trace carries FLOPs and shapes, and the table shows Python's columns",
          "[profiler][tools][cpu]") {
  auto x = torch::randn({64, 32}), w = torch::randn({32, 16}), b = torch::randn({16});
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 1, 2, 1, 0};
  po.cuda = false;
  po.with_flops = true;
  auto three_addmm_steps = [&](wb::Profiler& p) {
    p.start();
    for (int i = 0; i < 3; ++i) {
      torch::addmm(b, x, w);
      p.step();
    }
    p.stop();
  };
  wb::Profiler prof(po);
  three_addmm_steps(prof);
  REQUIRE(prof.results().size() == 1);
  auto& r = prof.results()[0];
  int64_t flops = 0;
  std::string shapes;
  for (const auto& e : r.trace().events)
    if (e.name == "aten::addmm") flops = e.flops, shapes = e.input_shapes;
  CHECK(flops == 2 * 64 * 32 * 16);  // torch's formula, from the in-memory events
  CHECK(shapes == "[[16], [64, 32], [32, 16], [], []]");
  CHECK(r.trace().with_flops);
  const auto dir = temp_dir("with_flops");
  r.save_chrome_trace(dir / "trace.json");
  // The saved trace says how it was recorded, and the reader computes the same FLOPs.
  const wb::Trace disk = wb::read_trace(dir / "trace.json");
  CHECK(disk.with_flops);
  CHECK(disk.record_shapes);
  int64_t disk_flops = 0;
  for (const auto& e : disk.events)
    if (e.name == "aten::addmm") disk_flops = e.flops;
  CHECK(disk_flops == flops);
  // Without the option: no FLOPs, no flag.
  wb::ProfilerOptions plain = po;
  plain.with_flops = false;
  wb::Profiler p2(plain);
  three_addmm_steps(p2);
  CHECK_FALSE(p2.results()[0].trace().with_flops);
}

// ---- the traps a newcomer met --------------------------------------------------------------
namespace {
// What the process writes to stderr while `fn` runs (spdlog's warnings go there).
template <class F>
std::string stderr_of(F&& fn) {
  const fs::path file = fs::temp_directory_path() / ("wb_test_stderr_" + std::to_string(::getpid()));
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  ::close(fd);
  fn();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(file);
  return text.str();
}

// A loop of `steps` steps under `schedule`, with the profiler left to the caller.
void loop(wb::Profiler& prof, int steps) {
  auto x = torch::randn({8, 8});
  prof.start();
  for (int i = 0; i < steps; ++i) {
    auto y = torch::mm(x, x);
    prof.step();
  }
  prof.stop();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("a loop too short for its schedule: stop() warns, asking for the result throws",
          "[profiler][cpu]") {
  for (int steps : {0, 1}) {
    CAPTURE(steps);
    wb::ProfilerOptions po;
    po.schedule = wb::Schedule{1, 1, 3, 1, 0};  // records from step 2 on
    po.cuda = false;
    wb::Profiler prof(po);
    const std::string err = stderr_of([&] { loop(prof, steps); });
    CHECK(prof.results().empty());
    // The warning names the steps run and the steps the schedule needs.
    CHECK(contains(err, "no profiling cycle completed"));
    CHECK(contains(err, "called step() " + std::to_string(steps) + " time"));
    CHECK(contains(err, "at least 2 times"));
    CHECK(contains(err, "5 times for a whole cycle"));
    CHECK(prof.results().why_empty() ==
          err.substr(err.find("no profiling"), prof.results().why_empty().size()));
    // Every way to ask for the missing result throws a clear error instead of reading past the end.
    for (auto ask : std::vector<std::function<void()>>{
             [&] { prof.results().back(); }, [&] { prof.results().front(); }, [&] { prof.results()[0]; },
             [&] { prof.results().at(0); }, [&] { std::as_const(prof.results()).back(); }}) {
      try {
        ask();
        FAIL("no exception");
      } catch (const wb::NoProfileResult& e) {
        CHECK(contains(e.what(), "called step() " + std::to_string(steps) + " time"));
      }
    }
  }
  // A result that exists but an index past it; and an empty CycleResult: errors, never a crash.
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 0, 2, 1, 0};
  po.cuda = false;
  wb::Profiler prof(po);
  const std::string quiet = stderr_of([&] { loop(prof, 2); });
  CHECK_FALSE(contains(quiet, "no profiling cycle"));
  REQUIRE(prof.results().size() == 1);
  CHECK_THROWS_AS(prof.results()[1], wb::NoProfileResult);
  wb::CycleResult none;
  CHECK(none.trace().events.empty());
  CHECK_THROWS_AS(none.save_chrome_trace(temp_dir("none") / "t.json"), wb::NoProfileResult);
}

TEST_CASE("a failed save leaves the result saveable; the folder is created", "[profiler][cpu]") {
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 0, 2, 1, 0};
  po.cuda = false;
  wb::Profiler prof(po);
  loop(prof, 2);
  REQUIRE(prof.results().size() == 1);
  wb::CycleResult& r = prof.results().back();
  const fs::path dir = temp_dir("failed_save");
  std::ofstream(dir / "a_file") << "not a folder";
  // 1. The folder cannot be created (a file is in the way): the error names it, nothing is consumed.
  try {
    r.save_chrome_trace(dir / "a_file" / "sub" / "trace.json");
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(contains(e.what(), (dir / "a_file" / "sub").string()));
    CHECK(contains(e.what(), "nothing was lost"));
  }
  // 2. The destination cannot be written (a folder is in the way): Kineto has serialized by now,
  //    and the serialized trace waits for the next call.
  fs::create_directories(dir / "taken.json" / "x");
  CHECK_THROWS_AS(r.save_chrome_trace(dir / "taken.json"), std::runtime_error);
  // 3. A good path, in folders that do not exist yet: saved, and whole.
  const fs::path good = dir / "new" / "folder" / "trace.json";
  r.save_chrome_trace(good);
  CHECK(r.saved_path() == good);
  const wb::Trace t = wb::read_trace(good);
  CHECK(step_names(t) == std::set<std::string>{"ProfilerStep#0", "ProfilerStep#1"});
  // A second save after a good one says where the first went.
  try {
    r.save_chrome_trace(dir / "again.json");
    FAIL("no exception");
  } catch (const std::logic_error& e) {
    CHECK(contains(e.what(), good.string()));
  }
  for (const auto& p : fs::recursive_directory_iterator(dir))  // no temp file left behind
    CHECK(p.path().filename().string().find(".partial") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("schedules: wb::Profiler records the steps Python's torch.profiler records (recorded)",
          "[profiler][schedule][cpu]") {
  // tests/data/python/schedules.json: for each schedule, the ProfilerStep numbers of each trace
  // torch.profiler handed to on_trace_ready in a loop of N steps. The same schedule, in our text
  // form, through wb::Profiler and on_trace_ready, gives the same traces.
  std::ifstream in(std::string(WORKBOOK_ROOT) + "/tests/data/python/schedules.json");
  REQUIRE(in.good());
  const auto doc = nlohmann::json::parse(in);
  for (const auto& row : doc.at("schedules")) {
    const std::string text = row.at("text");
    CAPTURE(text);
    wb::ProfilerOptions po;
    po.schedule = wb::Schedule::parse(text);
    po.cuda = false;
    std::vector<std::vector<int>> cycles;
    po.on_trace_ready = [&](wb::CycleResult& r) {
      std::vector<int> steps;
      for (const auto& name : step_names(r.trace())) steps.push_back(wb::step_number(name));
      std::sort(steps.begin(), steps.end());
      cycles.push_back(steps);
    };
    wb::Profiler prof(po);
    stderr_of([&] { loop(prof, row.at("loop_steps").get<int>()); });
    CHECK(nlohmann::json(cycles) == row.at("cycles"));
  }
}

TEST_CASE("tensorboard_trace_handler writes each cycle's trace as it completes, as Python names it",
          "[profiler][cpu]") {
  const fs::path dir = temp_dir("tb_handler") / "does" / "not" / "exist";
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    wb::ProfilerOptions po;
    po.schedule = wb::Schedule::parse("wait=1, warmup=0, active=2");  // cycles until the loop ends
    po.cuda = false;
    po.on_trace_ready = wb::tensorboard_trace_handler(dir, gz ? "worker_gz" : "", gz);
    wb::Profiler prof(po);
    loop(prof, 9);  // N R S | N R S | N R S
    CHECK(prof.results().size() == 3);
  }
  std::vector<fs::path> plain, zipped;
  for (const auto& f : fs::directory_iterator(dir))
    (f.path().extension() == ".gz" ? zipped : plain).push_back(f.path());
  REQUIRE(plain.size() == 3);
  REQUIRE(zipped.size() == 3);
  std::sort(plain.begin(), plain.end());
  const std::regex python_name(R"(^.+_\d+\.\d+\.pt\.trace\.json$)");  // <host>_<pid>.<time ns>.pt.trace.json
  std::set<std::string> first_steps;
  for (const auto& p : plain) {
    CHECK(std::regex_match(p.filename().string(), python_name));
    first_steps.insert(*step_names(wb::read_trace(p)).begin());
  }
  CHECK(first_steps == std::set<std::string>{"ProfilerStep#1", "ProfilerStep#4", "ProfilerStep#7"});
  for (const auto& p : zipped) {
    CHECK(p.filename().string().rfind("worker_gz.", 0) == 0);
    CHECK(step_names(wb::read_trace(p)).size() == 2);  // gzip, read back
  }
  fs::remove_all(dir.parent_path().parent_path().parent_path());
}

TEST_CASE("a C++ program that is not a chapter: a ConvNet training step, judged by the general rules",
          "[profiler][inspect][cpu]") {
  // conv -> batch norm -> ReLU -> max pool -> Linear, in ATen's functional form, trained by hand.
  torch::manual_seed(0);
  auto param = [](std::vector<int64_t> shape) { return (torch::randn(shape) * 0.1).requires_grad_(); };
  std::vector<torch::Tensor> params = {param({8, 3, 3, 3}), param({8}), param({10, 8 * 8 * 8}), param({10})};
  auto x = torch::randn({8, 3, 16, 16});
  auto target = torch::randint(0, 10, {8}, torch::kLong);
  auto forward = [&] {
    auto h = torch::conv2d(x, params[0], params[1], /*stride=*/torch::IntArrayRef({1, 1}),
                           /*padding=*/torch::IntArrayRef({1, 1}));
    h = torch::batch_norm(h, {}, {}, {}, {}, /*training=*/true, 0.1, 1e-5, /*cudnn_enabled=*/false);
    h = torch::max_pool2d(torch::relu(h), 2);
    return torch::linear(h.flatten(1), params[2], params[3]);
  };
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule::parse("wait=1, warmup=1, active=3, repeat=1");
  po.cuda = false;
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < po.schedule.total_steps(); ++i) {
    {
      wb::Annotation a("train_step");
      auto loss = torch::cross_entropy_loss(forward(), target);
      loss.backward();
      torch::NoGradGuard no_grad;
      for (auto& p : params) {
        p.sub_(p.grad() * 0.01);
        p.mutable_grad().zero_();
      }
    }
    prof.step();
  }
  prof.stop();
  const wb::TraceModel m(prof.results().back().trace());
  CHECK_FALSE(wb::is_chapter_trace(m));
  wb::FactOptions o;
  o.annotation = "";
  const wb::LessonsReport r = wb::inspect_trace(m, o);
  CHECK(r.options.annotation == "train_step");
  for (const auto& f : r.facts) {
    CHECK(f.id != "pointwise_traffic");
    if (f.id != "cpu_shares") continue;
    INFO(f.value);
    REQUIRE(f.measured);
    REQUIRE(f.data.contains("classes"));
    CHECK(f.data.at("classes").at("convolution").at("share").get<double>() > 0.05);
    CHECK(f.data.at("classes").contains("normalization"));
    CHECK(f.data.at("classes").contains("pooling"));
  }
}

TEST_CASE("with_stack: TorchScript code records its source lines, the table groups by them",
          "[profiler][tools][cpu]") {
  // From C++ the stack of an op is TorchScript's call stack (plain C++ has none recorded), as
  // Python's with_stack gives for scripted code.
  auto cu = torch::jit::compile(R"JIT(
def two_ops(x):
    y = x.matmul(x)
    return y.relu()
)JIT");
  auto x = torch::randn({16, 16});
  auto run = [&](bool with_stack) {
    wb::ProfilerOptions po;
    po.schedule = wb::Schedule{0, 0, 2, 1, 0};
    po.cuda = false;
    po.with_stack = with_stack;
    wb::Profiler prof(po);
    prof.start();
    for (int i = 0; i < 2; ++i) {
      cu->run_method("two_ops", x);
      prof.step();
    }
    prof.stop();
    return std::move(prof.results().back());
  };
  wb::CycleResult plain = run(false), stacked = run(true);
  auto stack_of = [](const wb::Trace& t, const std::string& op) {
    for (const auto& e : t.events)
      if (e.name == op && !e.stack.empty()) return e.stack;
    return std::vector<std::string>{};
  };
  CHECK(stack_of(plain.trace(), "aten::matmul").empty());
  const auto frames = stack_of(stacked.trace(), "aten::matmul");
  INFO("aten::matmul's stack: " << nlohmann::json(frames).dump());
  REQUIRE_FALSE(frames.empty());
  CHECK(stacked.trace().with_stack);
  CHECK_FALSE(plain.trace().with_stack);
  // key_averages(group_by_stack_n=N) on the in-memory events: a Source Location column.
  wb::GroupOptions g;
  g.group_by_stack_n = 3;
  CHECK(wb::key_averages_table(stacked.trace(), {}, g).find("Source Location") != std::string::npos);
  CHECK(wb::key_averages_table(plain.trace(), {}, g).find("Source Location") == std::string::npos);
  // The saved trace says how it was recorded, as Python's does ("with_stack": 1).
  const auto dir = temp_dir("with_stack");
  stacked.save_chrome_trace(dir / "trace.json");
  const wb::Trace disk = wb::read_trace(dir / "trace.json");
  CHECK(disk.with_stack);
  // ... and keeps each op's stack ("Call stack"), so `table --group-by-stack-n` reads it back.
  CHECK(stack_of(disk, "aten::matmul") == frames);
  CHECK(wb::key_averages_table(disk, {}, g).find("Source Location") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("profile_memory: [memory] records in the result and the saved trace, the table's memory columns",
          "[profiler][tools][cpu][memory]") {
  // A 1 MiB tensor made and dropped inside "alloc_free", and one kept across "keep" into "drop":
  // allocated, freed, and a region that frees more than it allocates.
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 1, 2, 1, 0};
  po.cuda = false;
  po.profile_memory = true;
  auto loop = [&](wb::Profiler& p) {
    torch::Tensor kept;
    p.start();
    for (int i = 0; i < 3; ++i) {
      {
        wb::Annotation a("alloc_free");
        auto t = torch::empty({256, 1024});  // 1 MiB, freed at the end of the scope
      }
      {
        wb::Annotation a("keep");
        kept = torch::empty({256, 1024});
      }
      {
        wb::Annotation a("drop");
        kept = torch::Tensor();
      }
      p.step();
    }
    p.stop();
  };
  wb::Profiler prof(po);
  loop(prof);
  auto& r = prof.results().back();
  CHECK(r.trace().profile_memory);
  int64_t allocated = 0, freed = 0;
  for (const auto& e : r.trace().events)
    if (e.memory && e.memory->on_cpu()) (e.bytes > 0 ? allocated : freed) += e.bytes;
  CHECK(allocated >= 4 * (1 << 20));  // 2 steps x 2 tensors of 1 MiB
  CHECK(freed <= -4 * (1 << 20));
  const std::string live = wb::key_averages_table(r.trace(), {"self_cpu_memory_usage", -1, 55});
  CHECK(live.find("Self CPU Mem") != std::string::npos);
  const auto dir = temp_dir("profile_memory");
  r.save_chrome_trace(dir / "trace.json");
  const wb::Trace disk = wb::read_trace(dir / "trace.json");
  CHECK(disk.profile_memory);
  int64_t records = 0, totals = 0;
  for (const auto& e : disk.events)
    if (e.memory) ++records, totals += e.memory->total_allocated >= 0;
  CHECK(records >= 8);
  CHECK(totals == records);  // the saved trace carries the allocator's totals
  // The saved trace's table is the live one's (same rows, same bytes), and "drop" frees 1 MiB a step.
  const std::string saved = wb::key_averages_table(disk, {"self_cpu_memory_usage", -1, 55});
  const auto row_of = [](const std::string& table, const std::string& name) {
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);)
      if (line.find(" " + name + " ") != std::string::npos) return line;
    return std::string();
  };
  CHECK(row_of(saved, "drop").find("-2.00 MB") != std::string::npos);
  CHECK(row_of(live, "drop").find("-2.00 MB") != std::string::npos);
  CHECK(row_of(saved, "alloc_free").find("0 B") != std::string::npos);
  // Without the option: no records, no columns.
  wb::ProfilerOptions plain = po;
  plain.profile_memory = false;
  wb::Profiler p2(plain);
  loop(p2);
  CHECK_FALSE(p2.results().back().trace().profile_memory);
  CHECK_FALSE(p2.results().back().trace().has_memory_records());
  CHECK(wb::key_averages_table(p2.results().back().trace()).find("CPU Mem") == std::string::npos);
}
