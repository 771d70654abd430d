#include "workbook/rules.hpp"
#include "workbook/names.hpp"

#include <array>
#include <cctype>
#include <initializer_list>
#include <utility>
#include <charconv>
#include <string>

namespace wb {

namespace {
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
std::string_view strip_aten(std::string_view op) { return starts_with(op, "aten::") ? op.substr(6) : op; }
}  // namespace

bool is_device_work(const Event& e) {
  return e.kind == Kind::Kernel || e.kind == Kind::Memcpy || e.kind == Kind::Memset;
}

KernelClass classify_kernel_name(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view g : {"nvjet", "gemm", "cutlass", "xmma", "cublas"})
    if (contains(n, g)) return KernelClass::Gemm;
  if (contains(n, "elementwise") || starts_with(n, "triton_poi")) return KernelClass::Elementwise;
  if (contains(n, "reduce_kernel") || starts_with(n, "triton_red") || starts_with(n, "triton_per"))
    return KernelClass::Reduction;
  return KernelClass::Other;
}

KernelClass classify(const Event& e) {
  switch (e.kind) {
    case Kind::Memcpy: return KernelClass::Memcpy;
    case Kind::Memset: return KernelClass::Memset;
    case Kind::Kernel: return classify_kernel_name(e.name);
    default: return KernelClass::Other;
  }
}

namespace {
constexpr EnumNames<KernelClass, KernelClass::Other> kKernelClassNames{"gemm",   "elementwise", "reduction",
                                                                       "memcpy", "memset",      "other"};
}  // namespace

std::string_view class_name(KernelClass k) { return kKernelClassNames.name(k); }

bool is_gemm_op(std::string_view op) {
  constexpr std::array<std::string_view, 9> kGemm = {"mm",    "bmm", "addmm", "baddbmm",   "addbmm",
                                                     "addmv", "mv",  "dot",   "_scaled_mm"};
  if (!starts_with(op, "aten::")) return false;
  const auto o = strip_aten(op);
  for (auto g : kGemm)
    if (o == g) return true;
  return false;
}

bool is_view_op(std::string_view op) {
  constexpr std::array<std::string_view, 15> kViews = {
      "t",         "transpose", "as_strided", "view",   "reshape", "_unsafe_view",   "expand", "permute",
      "unsqueeze", "squeeze",   "slice",      "select", "alias",   "_reshape_alias", "detach"};
  if (!starts_with(op, "aten::")) return false;
  const auto o = strip_aten(op);
  for (auto v : kViews)
    if (o == v) return true;
  return false;
}

namespace {
bool one_of(std::string_view o, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (o == n) return true;
  return false;
}
// An op name without a trailing "_" (in place) or "_backward"/"_backward_data", for the lists.
std::string_view base_of(std::string_view o) {
  for (std::string_view suffix : {"_backward_data", "_backward"})
    if (o.size() > suffix.size() && o.substr(o.size() - suffix.size()) == suffix)
      return o.substr(0, o.size() - suffix.size());
  if (o.size() > 1 && o.back() == '_') return o.substr(0, o.size() - 1);
  return o;
}
bool is_reduction(std::string_view o) {
  return one_of(base_of(o), {"sum",
                             "mean",
                             "max",
                             "min",
                             "amax",
                             "amin",
                             "argmax",
                             "argmin",
                             "prod",
                             "var",
                             "std",
                             "var_mean",
                             "std_mean",
                             "norm",
                             "linalg_vector_norm",
                             "logsumexp",
                             "softmax",
                             "_softmax",
                             "log_softmax",
                             "_log_softmax",
                             "nll_loss",
                             "nll_loss_forward",
                             "nll_loss2d_forward",
                             "nll_loss_nd",
                             "cross_entropy_loss",
                             "mse_loss",
                             "l1_loss",
                             "smooth_l1_loss",
                             "binary_cross_entropy",
                             "binary_cross_entropy_with_logits",
                             "cumsum",
                             "topk",
                             "sort",
                             "all",
                             "any"});
}
bool is_elementwise(std::string_view o) {
  return starts_with(o, "_foreach_") ||
         one_of(base_of(o), {"add",        "sub",         "rsub",      "mul",
                             "div",        "neg",         "abs",       "pow",
                             "exp",        "log",         "sqrt",      "rsqrt",
                             "reciprocal", "relu",        "threshold", "gelu",
                             "silu",       "sigmoid",     "tanh",      "hardtanh",
                             "leaky_relu", "elu",         "softplus",  "clamp",
                             "clamp_min",  "clamp_max",   "where",     "fill",
                             "zero",       "addcmul",     "addcdiv",   "lerp",
                             "sign",       "maximum",     "minimum",   "eq",
                             "ne",         "lt",          "le",        "gt",
                             "ge",         "masked_fill", "dropout",   "native_dropout",
                             "bernoulli",  "uniform",     "normal",    "erf",
                             "floor",      "ceil",        "round"});
}
bool is_copy(std::string_view o) {
  return starts_with(o, "index") || starts_with(o, "scatter") || starts_with(o, "embedding") ||
         one_of(base_of(o), {"copy", "_copy_from", "_copy_from_and_resize", "to", "_to_copy", "clone",
                             "contiguous", "cat", "stack", "gather", "repeat", "flip", "roll",
                             "constant_pad_nd", "pad", "narrow_copy", "masked_select", "take"});
}
}  // namespace

OpClass classify_op(std::string_view op) {
  if (!starts_with(op, "aten::")) return OpClass::Other;
  const std::string_view o = strip_aten(op);
  if (is_gemm_op(op)) return OpClass::Gemm;
  if (contains(o, "attention")) return OpClass::Attention;
  if (contains(o, "conv") && !contains(o, "convert")) return OpClass::Convolution;
  for (std::string_view n : {"batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"})
    if (contains(o, n)) return OpClass::Normalization;
  if (contains(o, "pool")) return OpClass::Pooling;
  if (is_reduction(o)) return OpClass::Reduction;
  if (is_elementwise(o)) return OpClass::Elementwise;
  if (is_copy(o)) return OpClass::Copy;
  if (is_view_op(op)) return OpClass::View;
  if (one_of(o, {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_"}))
    return OpClass::Allocation;
  return OpClass::Other;
}

namespace {
constexpr EnumNames<OpClass, OpClass::Other> kOpClassNames{
    "gemm",        "convolution", "attention", "normalization", "pooling", "reduction",
    "elementwise", "copy",        "view",      "allocation",    "other"};
constexpr EnumNames<OpClass, OpClass::Other> kOpClassRules{
    "mm, bmm, addmm, baddbmm, addbmm, addmv, mv, dot, _scaled_mm",
    "an aten op whose name holds 'conv' (conv2d, convolution, convolution_backward, ...)",
    "an aten op whose name holds 'attention' (scaled_dot_product_attention, ...)",
    "an aten op whose name holds batch_norm, layer_norm, group_norm, instance_norm or rms_norm",
    "an aten op whose name holds 'pool' (max_pool2d, adaptive_avg_pool2d, ...)",
    "sum, mean, max/min, argmax, var/std, norm, (log_)softmax, the losses, cumsum, topk, sort",
    "add/sub/mul/div, activations (relu, gelu, silu, ...), their backward, fill_/zero_, _foreach_*",
    "copy_, to, clone, contiguous, cat, stack, index*, gather, scatter*, embedding*",
    "t, transpose, view, reshape, expand, permute, ... (metadata only)",
    "empty, empty_like, empty_strided, new_empty*, resize_",
    "any other op (a wrapper such as aten::linear, or an op with no rule)"};
}  // namespace

std::string_view op_class_name(OpClass c) { return kOpClassNames.name(c); }
std::string_view op_class_rule(OpClass c) { return kOpClassRules.name(c); }
bool is_compute(OpClass c) { return c != OpClass::View && c != OpClass::Allocation && c != OpClass::Other; }

bool is_dtod(const Event& e) {
  return e.kind == Kind::Memcpy && (contains(e.name, "DtoD") || contains(e.name, "Device -> Device"));
}

bool keep_stack_entry(std::string_view frame) {
  static constexpr std::pair<std::string_view, std::string_view> kFiltered[] = {
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"}};
  for (const auto& [file, fn] : kFiltered)
    if (contains(frame, file) && contains(frame, fn)) return false;
  return true;
}

bool is_step_name(std::string_view name) { return starts_with(name, kStepPrefix); }

int step_number(std::string_view name) {
  if (!is_step_name(name)) return -1;
  const auto digits = name.substr(kStepPrefix.size());
  int n = -1;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) ? n : -1;
}

namespace {
// "[1, 1]" or "1" -> numbers; false if the text is not a plain integer (list).
bool parse_int_list(std::string_view s, std::vector<int64_t>& out) {
  out.clear();
  size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '[' || s[i] == ']' || s[i] == ',')) ++i;
  };
  skip();
  while (i < s.size()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc()) return false;
    out.push_back(v);
    i = static_cast<size_t>(p - s.data());
    skip();
  }
  return !out.empty();
}
}  // namespace

int64_t op_flops(std::string_view op, const std::vector<OpInput>& in,
                 const std::vector<std::string_view>& concrete) {
  // torch multiplies in uint64_t; so do we (the same wrap-around on absurd shapes).
  auto tensor = [&](size_t i) { return i < in.size() && in[i].is_tensor; };
  auto product = [](const std::vector<int64_t>& d) {
    uint64_t f = 1;
    for (int64_t x : d) f *= static_cast<uint64_t>(x);
    return f;
  };
  const bool mm = op == "aten::mm", addmm = op == "aten::addmm";
  const bool bmm = op == "aten::bmm", baddbmm = op == "aten::baddbmm";
  if (mm || addmm || bmm || baddbmm) {
    const size_t a = (addmm || baddbmm) ? 1 : 0;  // addmm(self, mat1, mat2)
    if (!tensor(0) || !tensor(a) || !tensor(a + 1)) return 0;
    const auto& m1 = in[a].dims;
    const auto& m2 = in[a + 1].dims;
    if (m1.empty()) return 0;
    const int64_t overlap = m1.back();
    if (overlap == 0) return 0;
    uint64_t f = product(m1) / static_cast<uint64_t>(overlap);
    if (bmm || baddbmm) {
      if (m1.front() == 0) return 0;
      f /= static_cast<uint64_t>(m1.front());
    }
    f *= product(m2);
    return static_cast<int64_t>(f * 2);
  }
  if (op == "aten::mul" || op == "aten::add")
    return tensor(0) ? static_cast<int64_t>(product(in[0].dims)) : 0;
  if (op == "aten::conv2d") {
    if (!tensor(0) || !tensor(1) || in[1].dims.size() != 4 || in[0].dims.size() != 4 || concrete.size() < 7)
      return 0;
    std::vector<int64_t> stride, padding, dilation, groups;
    if (!parse_int_list(concrete[3], stride) || !parse_int_list(concrete[4], padding) ||
        !parse_int_list(concrete[5], dilation) || !parse_int_list(concrete[6], groups) ||
        groups.size() != 1 || groups[0] == 0 || padding.size() != 2 || dilation.size() != 2 ||
        stride.size() != 2 || stride[0] * stride[1] == 0)
      return 0;
    const auto& x = in[0].dims;
    const auto& w = in[1].dims;
    const uint64_t oh =
        static_cast<uint64_t>((x[2] + 2 * padding[0] - dilation[0] * (w[2] - 1) - 1) / stride[0] + 1);
    const uint64_t ow =
        static_cast<uint64_t>((x[3] + 2 * padding[1] - dilation[1] * (w[3] - 1) - 1) / stride[1] + 1);
    return static_cast<int64_t>(2 * static_cast<uint64_t>(x[0]) * oh * ow * static_cast<uint64_t>(w[2]) *
                                static_cast<uint64_t>(w[3]) * static_cast<uint64_t>(x[1]) *
                                static_cast<uint64_t>(w[0]) / static_cast<uint64_t>(groups[0]));
  }
  return 0;
}

}  // namespace wb
