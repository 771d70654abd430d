// Chapter 07 — a GeGLU MLP, y = down(gelu_tanh(gate(x)) * up(x)), three ways.
//
//   build/bin/07_geglu_mlp                        all three variants, schedule 1,1,3
//   build/bin/07_geglu_mlp --variant handwritten  one of them (eager | aoti | handwritten)
//
// Guess first: how many kernels per forward? Then look. Each variant is profiled into
// out/07_geglu_mlp/<variant>/ and judged by the lessons "07_geglu_mlp/<variant>":
//   eager        3 GEMMs + gelu + mul = 5 kernels; the [tokens, hidden] intermediate makes a
//                round trip through memory between gelu and mul
//   aoti         the MLP compiled by AOTInductor at build time: Inductor fuses gelu and mul into
//                one Triton kernel (4 kernels), the GEMMs keep their cuBLAS kernels
//   handwritten  the same fusion by hand: geglu_kernel.cu, launched from C++ (4 kernels; GPU only)
// GPU edition (the post's): batch 64, seq 128, dim 768, hidden 3072, bf16. CPU edition: batch 4,
// seq 128, dim 256, hidden 1024, fp32: the same ops on ~30x less work (no kernels to count).
#include <torch/nn/modules/linear.h>  // torch::nn::Linear (not the whole torch/torch.h)

#include <CLI/CLI.hpp>  // --size's help

#include "geglu.hpp"
#include <algorithm>

#include "workbook/variants.hpp"  // wb::Variant, wb::plain_variant, wb::AotiModel

int main(int argc, char** argv) {
  wb::Chapter ch{"07_geglu_mlp", "Chapter 07: a GeGLU MLP: five kernels, then four"};
  ch.defaults().schedule = "1,1,3";
  // --size stays listed and validated rather than hidden (CLI11 leaves a hidden option's name
  // out of its error messages)
  ch.app().get_option("--size")->description("not used here: the shapes are the post's (see the README)");
  ch.variants({"eager", "aoti", "handwritten"}, "eager | aoti | handwritten | all");

  return ch.main(argc, argv, [&](wb::Run& run) {
    const bool gpu = run.on_cuda();
    const int64_t batch = gpu ? 64 : 4, seq = 128, dim = gpu ? 768 : 256, hidden = gpu ? 3072 : 1024;
    torch::NoGradGuard inference;
    torch::manual_seed(0);
    torch::nn::Linear gate(torch::nn::LinearOptions(dim, hidden).bias(false));
    torch::nn::Linear up(torch::nn::LinearOptions(dim, hidden).bias(false));
    torch::nn::Linear down(torch::nn::LinearOptions(hidden, dim).bias(false));
    for (auto* l : {&gate, &up, &down}) (*l)->to(run.device(), run.dtype());
    const auto x = torch::randn({batch, seq, dim}, run.options());
    wb::AotiModel compiled(WB07_AOTI_MANIFEST);  // the same MLP, built by chapters/export_aoti.py
    const std::vector<torch::Tensor> args{x, gate->weight, up->weight, down->weight};
    const std::string no_kernel = wb07::handwritten_unavailable(run.device(), run.dtype());
    const std::string no_aoti = run.wants("aoti") && !compiled.usable_with(args) ? compiled.why_not() : "";
    run.refuse("aoti", no_aoti);  // asked for by name where it cannot run: exit 2, before any work
    run.refuse("handwritten", no_kernel);

    torch::Tensor y;
    std::vector<wb::Variant> vs;
    if (run.wants("eager"))
      vs.push_back(wb::plain_variant("eager", [&] { y = down(torch::gelu(gate(x), "tanh") * up(x)); }));
    if (run.wants("aoti"))
      vs.push_back(wb::plain_variant(
          "aoti", [&] { y = compiled.run(args).at(0); }, compiled.describe(), no_aoti));
    if (run.wants("handwritten"))
      vs.push_back(wb::plain_variant(
          "handwritten", [&] { y = down(wb07::geglu_fused(gate(x), up(x))); }, "", no_kernel));

    // Each variant profiled on its own, into out/07_geglu_mlp/<variant>/.
    int code = 0;
    std::filesystem::path eager_trace;  // fusion_pays: each fused variant's kernels against eager's
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
          wb::Annotation a("mlp_fwd");  // record_function("mlp_fwd")
          v.step();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      wb::ReportOptions ro;
      ro.variant = v.name;  // reported into out/07_geglu_mlp/<variant>/, judged by "07_geglu_mlp/<variant>"
      ro.annotation = "mlp_fwd";
      ro.problem = wb::Problem::gemm(/*m=*/batch * seq, /*k=*/dim, /*n=*/hidden, run.dtype_bytes());
      ro.napkin = [p = ro.problem](const std::string& dev) { return wb::napkin_geglu(p, dev); };
      if (!eager_trace.empty()) ro.reference = {nullptr, "", "eager", eager_trace};
      const wb::RunOutputs o = run.report(prof.results().back(), ro);
      if (v.name == "eager") eager_trace = o.trace;
      code = std::max(code, run.exit_code(o));
    }
    return code;
  });
}
