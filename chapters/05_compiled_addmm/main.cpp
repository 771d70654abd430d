// Chapter 05 — what torch.compile does to add(matmul(x, w), b), in C++.
//
// Python's torch.compile rewrites matmul + add into one addmm. C++ has no torch.compile, so the
// chapter runs the honest counterparts side by side, each profiled on its own (out/<variant>/):
//   eager  add(matmul(x, w), b)            addmm  torch::addmm(b, x, w): the rewrite by hand
//   aoti   Inductor's generated code       graph  one step captured in a CUDA graph, replayed
// and then compares them: did the ops collapse, did the launches halve (checked twice: from the
// Kineto trace and from a CUPTI launch census), what did each cost the CPU per step.
// Order matters: everything unprofiled (timing, census) runs before the first profiler, because
// Kineto keeps CUPTI's one subscriber slot once it has started. README.md tells the story.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <algorithm>
#include <iostream>

#include "across.hpp"
#include "variants.hpp"
#include "workbook/chapter.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/trace_reader.hpp"

namespace {

// The census of every variant; a failure (no GPU, a conflict) is noted once, never miscounted.
void take_census(std::vector<ch05::Variant>& vs, std::vector<ch05::VariantRun>& runs, bool cuda,
                 const wb::Run& run, const char* when) {
  for (size_t i = 0; i < vs.size(); ++i) {
    if (!vs[i].unavailable.empty()) continue;  // runs[i] is vs[i]'s row
    try {
      runs[i].census = ch05::census_steps(vs[i].step, 10, cuda);
    } catch (const wb::CensusError& e) {
      for (auto& r : runs) r.census_note = e.what();
      run.say(std::string("Launch census (") + when + "): " + e.what() + "\n");
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  wb::Chapter ch{"05_compiled_addmm", "Chapter 05: matmul + add compiled: addmm by hand, AOTInductor, CUDA graph"};
  // 4096 on a GPU (the seed's size), 1024 on a CPU (4096 in fp32 takes seconds per step there).
  ch.app().get_option("--size")->default_str("4096 on a GPU, 1024 on a CPU");
  ch.app().final_callback([&] {  // after parsing, unless --size was given
    if (ch.app().get_option("--size")->count() > 0) return;
    const auto& dev = ch.defaults().device;
    ch.defaults().size = dev == "cuda" || (dev == "auto" && wb::cuda_available()) ? 4096 : 1024;
  });
  std::string which = "all", census = "before", manifest = WB05_AOTI_MANIFEST;
  ch.app().add_option("--variant", which, "which variant to run")
      ->check(CLI::IsMember({"all", "eager", "addmm", "aoti", "graph"}))->capture_default_str();
  ch.app().add_option("--census", census,
                      "CUPTI launch census: before the profiler (works), after it (shows the conflict "
                      "with Kineto), only (no profiling), off")
      ->check(CLI::IsMember({"before", "after", "only", "off"}))->capture_default_str();
  ch.app().add_option("--aoti-manifest", manifest, "the AOTI package's manifest, written by export_aoti.py at build time")
      ->capture_default_str();

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t n = run.size();
    const bool cuda = run.on_cuda();
    torch::manual_seed(0);
    const ch05::Inputs in{torch::randn({n, n}, run.options()), torch::randn({n, n}, run.options()),
                          torch::randn({n, n}, run.options())};
    ch05::VariantOptions vo;
    vo.aoti = ch05::read_aoti_manifest(manifest);
    if (vo.aoti.available)
      run.say("AOTI package " + vo.aoti.package.string() + " (" + vo.aoti.device + ", " + vo.aoti.dtype +
              ", torch " + vo.aoti.torch_version + ")\n  generated wrapper: " + vo.aoti.wrapper_in_package +
              " inside the .pt2 (a zip), extracted to " + vo.aoti.wrapper.string() + "\n  line " +
              std::to_string(vo.aoti.generated_line) + ", the call that does the work: " + vo.aoti.generated_call + "\n");

    // 1. Build, warm up and time every variant, without the profiler.
    std::vector<ch05::Variant> vs;
    std::vector<ch05::VariantRun> runs;
    for (const auto& name : ch05::variant_names()) {
      if (which != "all" && which != name) continue;
      vs.push_back(ch05::make_variant(name, in, vo));
      if (which == name && !vs.back().unavailable.empty())  // asked for by name: a usage error
        throw wb::UsageError("--variant " + name + ": " + vs.back().unavailable);
      ch05::VariantRun r;
      r.name = name;
      r.unavailable = vs.back().unavailable;
      if (r.unavailable.empty()) {
        const auto t = ch05::time_steps(vs.back().step, cuda);
        r.cpu_us = t.median_us;
        r.timed_steps = t.steps;
        run.say(name + ": " + vs.back().what);
      } else {
        run.say(name + ": unavailable: " + r.unavailable);
      }
      runs.push_back(std::move(r));
    }
    if (which == "all" || which == "aoti") {  // the same package with two model instances
      vo.aoti_runners = 2;
      const ch05::Variant two = ch05::make_variant("aoti", in, vo);
      if (two.unavailable.empty()) {
        ch05::VariantRun r;
        r.name = "aoti x2";
        const auto t = ch05::time_steps(two.step, cuda);
        r.cpu_us = t.median_us;
        r.timed_steps = t.steps;
        runs.push_back(std::move(r));
      }
    }

    // 2. The launch census, before Kineto takes CUPTI.
    if (census == "before" || census == "only") take_census(vs, runs, cuda, run, "before profiling");
    if (census == "off")
      for (auto& r : runs) r.census_note = "the census was turned off (--census off)";

    // 3. Profile each variant into out/<variant>/.
    int code = 0;
    if (census != "only") {
      for (size_t i = 0; i < vs.size(); ++i) {
        if (!vs[i].unavailable.empty()) continue;
        run.say("\n==== variant " + vs[i].name + ": " + vs[i].what + " ====");
        auto cycle = run.profile([&] {
          wb::Annotation a("matmul_add");
          vs[i].step();
        });
        wb::ReportOptions ro;
        ro.variant = vs[i].name;
        const wb::RunOutputs o = run.report(cycle, ro);
        runs[i].trace = wb::read_trace(o.trace);
        if (vs[i].name == "aoti") runs[i].generated_call = vo.aoti.generated_call;
        code = std::max(code, run.exit_code(o));
      }
      if (census == "after") take_census(vs, runs, cuda, run, "after profiling");
    }

    // 4. Side by side, and the lessons that need two variants.
    std::vector<ch05::Summary> sums;
    for (const auto& r : runs) sums.push_back(ch05::summarize(r));
    const wb::Problem problem{n, 1, run.dtype_bytes()};
    const wb::LessonsReport across = ch05::check_across(runs, problem);
    std::string device_name;
    for (const auto& r : runs)
      if (r.trace && !r.trace->devices.empty()) device_name = r.trace->devices.front().name;
    const std::string text = "==== all variants, N=" + std::to_string(n) + " ====\n" +
                             ch05::side_by_side(runs, sums) + "\n" +
                             ch05::memcpy_napkin(sums, problem, device_name) + "\n" +
                             wb::render_lessons(across, wb::Format::Text);
    {
      wb::DirLock lock(run.out());
      wb::write_file_atomic(run.out() / "comparison.txt", text);
      wb::write_file_atomic(run.out() / "comparison.json", wb::to_json(across).dump(2) + "\n");
    }
    run.say(text);
    if (run.config().quiet)
      std::cout << "05_compiled_addmm (across variants): lessons " << across.passed << " pass, " << across.failed
                << " fail, " << across.not_applicable << " not applicable\n";
    if (run.config().check && across.failed > 0) code = 3;
    return code;
  });
}
