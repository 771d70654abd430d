// Chapter 08 — memory: what the caching allocator, autograd and the optimizer do with bytes.
//
//   build/bin/08_memory                 schedule 0,0,4: the first step recorded is the first ever
//
// Guess first: how many MB does one training step of chapter 07's GeGLU MLP hold at its peak,
// and where is the peak? Then look: the table's memory columns, the memory lane under the steps
// in timeline.svg, and the lessons. One step here is
//   forward    y = down(gelu_tanh(gate(x)) * up(x)), loss = mse(y, target): autograd keeps
//              g, u, gelu(g) and h ([tokens, hidden] each) for the backward
//   backward   loss.backward(): frees what the forward kept, allocates the weight gradients
//   optimizer  Adam's step (its state, exp_avg and exp_avg_sq, appears at the first one), then
//              zero_grad() (set_to_none: the gradients are freed)
//   inplace    buffer.mul_(half) in place: no new tensor, no allocation
//   eager_fwd  the forward without autograd: gelu(g) is allocated and freed within it
//   fused_fwd  (GPU, bf16) the same with chapter 07's fused gelu*mul kernel: no gelu(g) at all
// GPU edition: batch 64, seq 128, dim 768, hidden 3072, bf16 (the post's, chapter 07's shapes).
// CPU edition: batch 4, seq 128, dim 256, hidden 1024, fp32.
#include <torch/nn/modules/linear.h>  // torch::nn::Linear (not the whole torch/torch.h)
#include <torch/optim/adam.h>

#include "geglu.hpp"    // models/geglu: the fused gelu*mul (wb07::geglu_fused)
#include <CLI/CLI.hpp>  // --size's help

#include "memory_napkin.hpp"  // the napkin math printed with the report
#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"08_memory", "Chapter 08: memory: the caching allocator, activations, optimizer state"};
  ch.defaults().schedule = "0,0,4";  // record from the very first step: the allocator's and Adam's
  ch.app().get_option("--size")->description("not used here: the shapes are chapter 07's (see the README)");

  return ch.main(argc, argv, [&](wb::Run& run) {
    const bool gpu = run.on_cuda();
    const int64_t batch = gpu ? 64 : 4, seq = 128, dim = gpu ? 768 : 256, hidden = gpu ? 3072 : 1024;
    torch::manual_seed(0);
    torch::nn::Linear gate(torch::nn::LinearOptions(dim, hidden).bias(false));
    torch::nn::Linear up(torch::nn::LinearOptions(dim, hidden).bias(false));
    torch::nn::Linear down(torch::nn::LinearOptions(hidden, dim).bias(false));
    for (auto* l : {&gate, &up, &down}) (*l)->to(run.device(), run.dtype());
    torch::optim::Adam adam({gate->weight, up->weight, down->weight}, torch::optim::AdamOptions(1e-4));
    const auto x = torch::randn({batch, seq, dim}, run.options());
    const auto target = torch::randn({batch, seq, dim}, run.options());
    auto buffer = torch::ones({batch, seq, dim}, run.options());
    // The in-place op's operand is a tensor made here: a C++ number would be wrapped into a fresh
    // 0-dim tensor at every call (an allocation of its own; the lesson's verdict shows it).
    const auto half = torch::full({}, 0.5, run.options());
    const bool fused = wb07::handwritten_unavailable(run.device(), run.dtype()).empty();

    wb::ProfilerOptions opts;
    opts.schedule = run.schedule();
    opts.cuda = run.on_cuda();
    opts.profile_memory = true;  // Python's profile_memory=True: every allocation and free
    opts.record_shapes = true;
    wb::Profiler prof(opts);
    prof.start();
    for (int i = 0; i < run.schedule().total_steps(); ++i) {
      torch::Tensor loss;
      {
        wb::Annotation a("forward");
        const auto y = down(torch::gelu(gate(x), "tanh") * up(x));
        loss = torch::mse_loss(y, target);
      }
      {
        wb::Annotation a("backward");
        loss.backward();
      }
      {
        wb::Annotation a("optimizer");
        adam.step();
        adam.zero_grad();  // set_to_none: the gradients are freed here
      }
      torch::NoGradGuard no_grad;
      {
        wb::Annotation a("inplace");
        buffer.mul_(half);
      }
      {
        wb::Annotation a("eager_fwd");
        const auto y = down(torch::gelu(gate(x), "tanh") * up(x));
      }
      if (fused) {
        wb::Annotation a("fused_fwd");
        const auto y = down(wb07::geglu_fused(gate(x), up(x)));
      }
      prof.step();
      run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
    }
    prof.stop();
    wb::ReportOptions ro;
    ro.annotation = "forward";
    ro.problem = wb::Problem::gemm(/*m=*/batch * seq, /*k=*/dim, /*n=*/hidden, run.dtype_bytes());
    ro.napkin = wb08::napkin(batch * seq, dim, hidden, run.dtype_bytes(), fused);  // bytes from shapes
    return run.exit_code(run.report(prof.results().back(), ro));
  });
}
