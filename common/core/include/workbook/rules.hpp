// The domain rules every reader of a trace shares, each written once: what counts as device
// work, how a kernel is classified by its name, which aten ops are GEMMs, which ops are views
// (metadata only), and how a profiler step is named. Lessons, chapters, tools and exercises
// all ask here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "workbook/trace.hpp"

namespace wb {

// Work that ran on the device: kernels, copies and memsets. Not the GPU-side copy of a user
// annotation (Kind::GpuUserAnnotation), which spans work but is none itself.
bool is_device_work(const Event& e);

// Kernel classes, by the kernel's name (copies and memsets by their kind):
//   gemm         cuBLAS / cuBLASLt / CUTLASS matrix products: nvjet_* (Hopper's cuBLASLt),
//                *gemm*, cutlass_*, *xmma*, *cublas*
//   elementwise  ATen's (vectorized_)elementwise_kernel, Inductor's pointwise triton_poi_*
//   reduction    ATen's reduce_kernel, Inductor's triton_red_* / triton_per_*
//   memcpy, memset, other
enum class KernelClass { Gemm, Elementwise, Reduction, Memcpy, Memset, Other };
KernelClass classify_kernel_name(std::string_view name);
KernelClass classify(const Event& e);        // device work; anything else is Other
std::string_view class_name(KernelClass k);  // "gemm", "elementwise", ...

// The aten ops that run a matrix product themselves (aten::matmul and aten::linear dispatch
// to one of these): mm, bmm, addmm, baddbmm, addbmm, addmv, mv, dot, _scaled_mm.
bool is_gemm_op(std::string_view op);
// Ops that only rewrite shape/stride metadata (views): no kernel, zero device time.
// t, transpose, as_strided, view, reshape (of a contiguous tensor), _unsafe_view, expand,
// permute, unsqueeze, squeeze, slice, select, alias, _reshape_alias, detach.
bool is_view_op(std::string_view op);

// What an aten op computes, by its name (the "aten::" prefix; other namespaces are Other), for
// "where does a step's CPU time go". Each class is recognized by the rule op_class_rule() says:
//   gemm           is_gemm_op: mm, bmm, addmm, baddbmm, addbmm, addmv, mv, dot, _scaled_mm
//   convolution    the name holds "conv" (conv2d, convolution, mkldnn_convolution,
//                  convolution_backward, conv_transpose2d, slow_conv2d_forward, ...)
//   attention      the name holds "attention" (scaled_dot_product_attention, _flash_attention_*, ...)
//   normalization  the name holds batch_norm, layer_norm, group_norm, instance_norm or rms_norm
//   pooling        the name holds "pool" (max_pool2d, adaptive_avg_pool2d, *_backward, ...)
//   reduction      sum, mean, amax/amin/max/min, argmax/argmin, prod, var/std, norm, logsumexp,
//                  (log_)softmax and their backward, the losses (nll_loss*, mse_loss, ...), cumsum, topk,
//                  sort
//   elementwise    arithmetic and activations one element at a time: add/sub/mul/div, relu,
//                  gelu, silu, sigmoid, tanh, exp, ..., their _backward forms, fill_/zero_, the
//                  optimizers' addcmul_/addcdiv_/lerp_, and every _foreach_* op
//   copy           data movement: copy_, to/_to_copy, clone, contiguous, cat, stack, index*,
//                  gather, scatter*, embedding*, repeat, flip, pad
//   view           is_view_op (metadata only)
//   allocation     empty, empty_like, empty_strided, new_empty*, resize_
//   other          anything else (a wrapper such as aten::linear, or an op with no rule)
enum class OpClass {
  Gemm,
  Convolution,
  Attention,
  Normalization,
  Pooling,
  Reduction,
  Elementwise,
  Copy,
  View,
  Allocation,
  Other
};
OpClass classify_op(std::string_view op);
std::string_view op_class_name(OpClass c);  // "gemm", "convolution", ...
std::string_view op_class_rule(OpClass c);  // how the class is recognized, in one line
// Compute and data movement: every class but view, allocation and other.
bool is_compute(OpClass c);

// A copy from device memory to device memory ("Memcpy DtoD (Device -> Device)").
bool is_dtod(const Event& memcpy);

// FLOPs of one op call, by torch's own formula (computeFlops in torch/csrc/profiler/util.cpp,
// used by with_flops=True): aten::mm / addmm (2*M*K*N), bmm / baddbmm (2*B*M*K*N), mul / add
// (one per element of input 0), conv2d (2*N*Hout*Wout*Kh*Kw*Cin*Cout/groups). `dims` are the
// first inputs' shapes (nullptr for an input that is not a tensor), `concrete` the recorded
// concrete values (conv2d's stride, padding, dilation, groups at 3..6, as "[1, 1]" / "1").
// 0 when the op has no formula or the inputs do not fit it (as torch, which warns then).
struct OpInput {
  bool is_tensor = false;
  std::vector<int64_t> dims;
};
int64_t op_flops(std::string_view op, const std::vector<OpInput>& inputs,
                 const std::vector<std::string_view>& concrete = {});

// False for the stack frames Python leaves out of an op's stack (autograd's own backward()
// frames and its test harness's: _filter_stack_entry in torch/autograd/profiler_util.py).
bool keep_stack_entry(std::string_view frame);

// The profiler's step ranges: "ProfilerStep#N".
inline constexpr std::string_view kStepPrefix = "ProfilerStep#";
bool is_step_name(std::string_view name);
int step_number(std::string_view name);  // N of "ProfilerStep#N"; -1 when not a step name

}  // namespace wb
