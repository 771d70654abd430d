// Chapter 06 — one nn.Linear(32, 64) on a batch of 1024 rows: y = x @ W^T + b.
//
//   build/bin/06_linear                      all three variants, schedule 1,1,3
//   build/bin/06_linear --variant no_bias    one of them (--no-bias, --compiled: the same)
//
// Guess first: how many kernels, and is there an aten::add? Then look. Three variants, each
// profiled into out/06_linear/<variant>/ and judged by the lessons "06_linear/<variant>":
//   eager    nn.Linear with bias: aten::linear > aten::t (a view) and aten::addmm, one GEMM
//            with the bias in its epilogue (the H200's kernel name says _bias_)
//   no_bias  the same product without bias: aten::mm, no epilogue, another kernel name
//   aoti     the function compiled by AOTInductor at build time: the view chain is gone from
//            the CPU lane, the GEMM kernel is the same
#include <torch/nn/modules/linear.h>  // torch::nn::Linear (not the whole torch/torch.h)

#include <algorithm>

#include "workbook/variants.hpp"  // wb::Variant, wb::plain_variant, wb::AotiModel

int main(int argc, char** argv) {
  wb::Chapter ch{"06_linear", "Chapter 06: nn.Linear: a view, an addmm and an epilogue"};
  ch.defaults().size = 1024;  // --size: rows of x (the batch)
  ch.defaults().schedule = "1,1,3";
  ch.variants({"eager", "no_bias", "aoti"}, "eager | no_bias | aoti | all",
              {{"--no-bias", "no_bias", "only the variant without bias"},
               {"--compiled", "aoti", "only the AOTInductor variant"}});

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t rows = run.size(), d_in = 32, d_out = 64;
    torch::NoGradGuard inference;
    torch::manual_seed(0);
    torch::nn::Linear with_bias(torch::nn::LinearOptions(d_in, d_out));
    torch::nn::Linear no_bias(torch::nn::LinearOptions(d_in, d_out).bias(false));
    with_bias->to(run.device(), run.dtype());
    no_bias->to(run.device(), run.dtype());
    const auto x = torch::randn({rows, d_in}, run.options());
    wb::AotiModel compiled(WB06_AOTI_MANIFEST);  // linear(x, w, b), built by chapters/export_aoti.py
    const std::vector<torch::Tensor> args{x, with_bias->weight, with_bias->bias};
    const std::string no_aoti = run.wants("aoti") && !compiled.usable_with(args) ? compiled.why_not() : "";
    run.refuse("aoti", no_aoti);  // --variant aoti where it cannot run: exit 2, before any work

    torch::Tensor y;
    std::vector<wb::Variant> vs;
    if (run.wants("eager")) vs.push_back(wb::plain_variant("eager", [&] { y = with_bias(x); }));
    if (run.wants("no_bias")) vs.push_back(wb::plain_variant("no_bias", [&] { y = no_bias(x); }));
    if (run.wants("aoti"))
      vs.push_back(wb::plain_variant(
          "aoti", [&] { y = compiled.run(args).at(0); }, compiled.describe(), no_aoti));

    // Each variant profiled on its own, into out/06_linear/<variant>/.
    int code = 0;
    for (const wb::Variant& v : vs) {
      if (!v.unavailable.empty()) {
        run.say(v.name + ": unavailable: " + v.unavailable);
        continue;
      }
      run.say("\n==== variant " + v.name + (v.what.empty() ? "" : ": " + v.what) + " ====");
      wb::ProfilerOptions opts;        // torch.profiler.profile(schedule=..., activities=...)
      opts.schedule = run.schedule();  // --schedule
      opts.cuda = run.on_cuda();
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a("linear_fwd");  // record_function("linear_fwd")
          v.step();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = v.name;  // reported into out/06_linear/<variant>/, judged by "06_linear/<variant>"
      ro.annotation = "linear_fwd";
      ro.problem = wb::Problem::gemm(/*m=*/rows, /*k=*/d_in, /*n=*/d_out, run.dtype_bytes());
      ro.napkin = [p = ro.problem, bias = v.name != "no_bias"](const std::string& dev) {
        return wb::napkin_linear(p, bias, dev);
      };
      code = std::max(code, run.exit_code(run.report(prof.results().back(), ro)));
    }
    return code;
  });
}
