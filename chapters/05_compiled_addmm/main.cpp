// Chapter 05 — what torch.compile does to add(matmul(x, w), b), in C++.
//
// Python's torch.compile rewrites matmul + add into one addmm. C++ has no torch.compile, so the
// chapter runs the honest counterparts side by side, each profiled on its own (out/<variant>/):
//   eager  add(matmul(x, w), b)            addmm  torch::addmm(b, x, w): the rewrite by hand
//   aoti   Inductor's generated code       graph  one step captured in a CUDA graph, replayed
// and then compares them (out/comparison.txt): did the ops collapse, did the launches halve
// (checked twice: from the Kineto trace and from a CUPTI launch census), what did each cost the
// CPU per step. Order matters: everything unprofiled (timing, census) runs before the first
// profiler, because Kineto keeps CUPTI's one subscriber slot once it has started.
// README.md tells the story.
//
// Run: build/bin/05_compiled_addmm [--size 64] [--variant eager|addmm|aoti|graph]
//                                  [--census before|after|only|off] [--check] [--compare]
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <algorithm>

#include "workbook/chapter.hpp"
#include "workbook/variants.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"05_compiled_addmm",
                 "Chapter 05: matmul + add compiled: addmm by hand, AOTInductor, CUDA graph"};
  ch.defaults().size_for_device = {4096, 1024, "4096 in fp32 takes seconds per step on a CPU"};
  ch.variants({"eager", "addmm", "aoti", "graph"}, "which variant to run");
  wb::CensusFlags census(ch, WB05_AOTI_MANIFEST);  // --census, --aoti-manifest

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t n = run.size();
    torch::manual_seed(0);
    const torch::Tensor x = torch::randn({n, n}, run.options()), w = torch::randn({n, n}, run.options()),
                        b = torch::randn({n, n}, run.options());
    auto y = std::make_shared<torch::Tensor>();  // every variant's result
    auto matmul_add = [x, w, b, y] { *y = torch::add(torch::matmul(x, w), b); };
    const wb::AotiPackage aoti = census.aoti_package();  // built with the chapter
    if (aoti.available && run.wants("aoti")) run.say(aoti.describe());

    // The four ways to compute y = x @ w + b, each warmed up (one that cannot run here says why).
    std::vector<wb::Variant> vs;
    if (run.wants("eager"))
      vs.push_back(wb::step_variant("eager", "torch::add(torch::matmul(x, w), b)", matmul_add));
    if (run.wants("addmm"))
      vs.push_back(wb::step_variant("addmm", "torch::addmm(b, x, w)  (= 1*b + 1*(x@w))",
                                    [x, w, b, y] { *y = torch::addmm(b, x, w); }));
    if (run.wants("aoti")) vs.push_back(wb::aoti_variant("aoti", aoti, {x, w, b}));
    if (run.wants("graph"))
      vs.push_back(
          wb::cuda_graph_variant("graph", "one captured add(matmul(x, w), b)", matmul_add, run.on_cuda()));
    if (run.wants("aoti") && aoti.available) {  // the same package with two model instances
      vs.push_back(wb::aoti_variant("aoti x2", aoti, {x, w, b}, /*runners=*/2));
      vs.back().timed_only = true;
    }

    // 1. Unprofiled: CPU time per step, then the CUPTI launch census (before Kineto takes CUPTI).
    std::vector<wb::VariantRun> runs = census.measure(run, vs);

    // 2. Profile each variant on its own under "matmul_add", into out/<variant>/; then --census
    //    after shows the conflict with Kineto.
    int code = 0;
    for (size_t k = 0; k < vs.size() && census.profiles(); ++k) {
      const wb::Variant& v = vs[k];
      if (!v.profiled()) continue;  // unavailable here (measure said why), or timed only
      run.say("\n==== variant " + v.name + (v.what.empty() ? "" : ": " + v.what) + " ====");
      wb::ProfilerOptions opts;        // torch.profiler.profile(schedule=..., activities=...)
      opts.schedule = run.schedule();  // --schedule
      opts.cuda = run.on_cuda();
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a("matmul_add");  // record_function("matmul_add")
          v.step();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = v.name;  // out/05_compiled_addmm/<variant>/, judged by "05_compiled_addmm/<variant>"
      const wb::RunOutputs o = run.report(prof.results().back(), ro);
      runs[k].trace = o.trace_data;  // for the comparison below
      code = std::max(code, run.exit_code(o));
    }
    if (census.profiles()) census.after(run, vs, runs);

    // 3. Side by side: per step CPU and GPU time, ops, launches (trace | census), the bias copy's
    //    napkin math, and the lessons across variants (out/comparison.txt, comparison.json).
    return std::max(code, run.report_across(runs));
  });
}
