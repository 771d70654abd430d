#include "geglu.hpp"

#include <c10/core/impl/DeviceGuardImplInterface.h>  // the current stream, without CUDA headers

#include <stdexcept>

#if WB07_HAVE_KERNEL
#include "geglu_kernel.hpp"
#endif

namespace wb07 {

std::string handwritten_unavailable(const torch::Device& device, torch::ScalarType dtype) {
#if !WB07_HAVE_KERNEL
  (void)device;
  (void)dtype;
  return "this build has no CUDA compiler (nvcc) or no CUDA LibTorch, so the hand-written kernel was not "
         "built";
#else
  if (!device.is_cuda())
    return "the hand-written kernel is a CUDA kernel; this run is on the CPU (it needs a GPU)";
  if (dtype != torch::kBFloat16) return "the hand-written kernel is written for bf16 (--dtype bf16)";
  return {};
#endif
}

torch::Tensor geglu_fused(const torch::Tensor& g, const torch::Tensor& u) {
  const std::string why = handwritten_unavailable(g.device(), g.scalar_type());
  if (!why.empty()) throw std::runtime_error(why);
  if (!u.is_cuda() || u.scalar_type() != torch::kBFloat16 || u.sizes() != g.sizes())
    throw std::runtime_error("geglu_fused: g and u must be bf16 GPU tensors of one shape");
#if WB07_HAVE_KERNEL
  const torch::Tensor gc = g.contiguous(), uc = u.contiguous();
  torch::Tensor y = torch::empty_like(gc);
  const c10::Stream stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(g.device());
  const std::string err =
      geglu_tanh_bf16(gc.data_ptr(), uc.data_ptr(), y.data_ptr(), gc.numel(), stream.native_handle());
  if (!err.empty()) throw std::runtime_error(err);
  return y;
#else
  return {};
#endif
}

}  // namespace wb07
