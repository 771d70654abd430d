// The harness's own references for the exercises' results (reference.hpp).
//
// Each reference draws the exercise's inputs again, in the order and with the calls the exercise
// program makes (the harness seeds the generator with 0 before the program's body), on the run's
// device and dtype, and computes what the workload must produce in double precision. The
// comparison is the relative L2 error: up to 1e-3 in fp32 (a CPU run), up to 3% in bf16 (a GPU
// run: an input or output rounds to 8 mantissa bits, ~0.4% each), unless a reference says why it
// allows another.
#include "reference.hpp"

#include <ATen/ops/cat.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <torch/utils.h>  // torch::manual_seed

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace ex {

namespace {

using nlohmann::json;

std::string num(double v, const char* fmt = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

double l2(const at::Tensor& t) { return std::sqrt(t.to(at::kDouble).pow(2).sum().item<double>()); }
at::Tensor d(const at::Tensor& t) { return t.to(at::kDouble); }

bool same_shape(const at::Tensor& got, at::IntArrayRef want, json& out) {
  if (got.defined() && got.sizes() == want) return true;
  out["ok"] = false;
  out["measured"] = got.defined() ? "has the wrong shape" : "is an undefined tensor";
  return false;
}

// The tolerance of a result computed in the run's dtype, against a double reference.
double tolerance(const ReferenceContext& c) {
  return c.options.dtype() == caffe2::TypeMeta::Make<float>() ||
                 c.options.dtype() == caffe2::TypeMeta::Make<double>()
             ? 1e-3
             : 0.03;
}

// `got` against `want` (double), by relative L2 error; `what` names the formula.
json compare(const ReferenceContext& c, const at::Tensor& got, const at::Tensor& want,
             const std::string& what, double tol = -1) {
  json out = {{"what", what}};
  if (!same_shape(got, want.sizes(), out)) return out;
  if (tol < 0) tol = tolerance(c);
  const double rel = l2(d(got) - want) / std::max(l2(want), 1e-30);
  out["rel_error"] = rel;
  out["tolerance"] = tol;
  out["ok"] = rel <= tol;
  out["measured"] = "is " + num(100 * rel, "%.2f") + "% from " + what;
  return out;
}

// The inputs as the program draws them: seed 0, then randn/rand in the program's order.
struct Draw {
  const ReferenceContext& c;
  explicit Draw(const ReferenceContext& ctx) : c(ctx) { torch::manual_seed(0); }
  at::Tensor randn(at::IntArrayRef shape) const { return at::randn(shape, c.options); }
  at::Tensor rand(at::IntArrayRef shape) const { return at::rand(shape, c.options); }
};

at::Tensor gelu_tanh(const at::Tensor& t) { return at::gelu(t, "tanh"); }
at::Tensor rms(const at::Tensor& x, double eps) { return x * at::rsqrt(x.pow(2).mean(-1, true) + eps); }

// ex01.1: y = x @ w + b, then y += b 16 times (one per layer): y = x @ w + 17 b.
json hot_loop_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const int64_t n = c.size;
  const at::Tensor x = r.randn({n, n}), w = r.randn({n, n}), b = r.randn({n, n});
  // bf16 on a GPU: 17 roundings of ~0.4% each, well inside 5%; the loop left out is ~85% off.
  return compare(c, got, at::matmul(d(x), d(w)) + 17.0 * d(b), "x @ w + 17 b (one add, then 16 add_ of b)",
                 0.05);
}

// Chapters 01-05's step: y = x @ w + b, x, w, b drawn N x N (B x N x N with a batch).
json matmul_add_y(const ReferenceContext& c, const at::Tensor& got, int64_t batch = 0) {
  const Draw r(c);
  const int64_t n = c.size;
  const std::vector<int64_t> shape =
      batch > 0 ? std::vector<int64_t>{batch, n, n} : std::vector<int64_t>{n, n};
  const at::Tensor x = r.randn(shape), w = r.randn(shape), b = r.randn(shape);
  return compare(c, got, at::matmul(d(x), d(w)) + d(b), "x @ w + b");
}

// ex03.2: one weight for the batch: x [8, N, N] @ w1 [N, N] + b [8, N, N].
json one_weight_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const int64_t n = c.size, batch = 8;
  const at::Tensor x = r.randn({batch, n, n}), w1 = r.randn({n, n}), b = r.randn({batch, n, n});
  return compare(c, got, at::matmul(d(x), d(w1)) + d(b), "x @ w1 + b (the one w1 for all 8)");
}

// Chapter 06's linear layer: x [1024, 32], W [64, 32], b [64]; y = x @ W^T (+ b).
json linear_y(const ReferenceContext& c, const at::Tensor& got, bool bias) {
  const Draw r(c);
  const at::Tensor x = r.randn({1024, 32}), w = r.randn({64, 32});
  if (!bias) return compare(c, got, at::matmul(d(x), d(w).t()), "x @ W^T");
  const at::Tensor b = r.randn({64});
  return compare(c, got, at::matmul(d(x), d(w).t()) + d(b), "x @ W^T + b");
}

// ex07.1: the GeGLU MLP, y = (gelu(x @ Wg^T) * (x @ Wu^T)) @ Wd^T.
json geglu_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor x = r.randn({2, 64, 128}), wg = r.randn({512, 128}), wu = r.randn({512, 128}),
                   wd = r.randn({128, 512});
  const at::Tensor h = gelu_tanh(at::matmul(d(x), d(wg).t())) * at::matmul(d(x), d(wu).t());
  // bf16: three GEMMs and the gelu round in turn; 5% leaves room for that and for nothing
  // left out (a missing up projection or gelu is far more).
  return compare(c, got, at::matmul(h, d(wd).t()), "(gelu(x @ Wg^T) * (x @ Wu^T)) @ Wd^T",
                 0.05 + tolerance(c));
}

// ex07.2: y = gelu(g) * u.
json gelu_mul_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor g = r.randn({1024, 1024}), u = r.randn({1024, 1024});
  return compare(c, got, gelu_tanh(d(g)) * d(u), "gelu(g) * u");
}

// ex08.1: w = w0 - 0.01 g per update, 3 updates before the profile and one per profiled step.
// The number of updates w holds, estimated from every element (sum((w0 - w) g) / sum(g g) / 0.01):
// rounding averages out over the 512K elements, an update that changes nothing does not.
json sgd_w(const ReferenceContext& c, const at::Tensor& got) {
  const int want_updates = 3 + c.steps_run;
  json out = {{"what", "w = w0 - 0.01 g x " + std::to_string(want_updates) + " updates (3 + " +
                           std::to_string(c.steps_run) + " profiled steps)"}};
  const Draw r(c);
  const at::Tensor w0 = r.randn({512, 1024}), g = r.randn({512, 1024});
  if (!same_shape(got, {512, 1024}, out)) return out;
  const at::Tensor gd = d(g), moved = d(w0) - d(got);
  const double updates = (moved * gd).sum().item<double>() / (gd * gd).sum().item<double>() / 0.01;
  const double residual = l2(moved - 0.01 * updates * gd) / l2(w0);
  out["updates"] = updates;
  out["residual"] = residual;
  out["ok"] = std::fabs(updates - want_updates) <= 0.25 && residual <= 0.05;
  out["measured"] = "holds " + num(updates, "%.2f") + " updates of -0.01 g (residual " +
                    num(100 * residual, "%.2f") + "% of |w0|)";
  return out;
}

// ex08.2: the loss curve, one mean of y = gelu(x @ w) per step (3 warm-up steps, then the
// profiled ones); every step computes the same y.
json curve_means(const ReferenceContext& c, const at::Tensor& got) {
  const int want_n = 3 + c.steps_run;
  json out = {{"what", std::to_string(want_n) + " means of gelu(x @ w), one per step (3 + " +
                           std::to_string(c.steps_run) + " profiled steps)"}};
  const Draw r(c);
  const at::Tensor x = r.randn({512, 512}), w = r.randn({512, 512});
  const double mean = gelu_tanh(at::matmul(d(x), d(w))).mean().item<double>();
  if (!got.defined() || got.dim() != 1) {
    out["ok"] = false;
    out["measured"] = "is not a list of numbers";
    return out;
  }
  const at::Tensor g = d(got);
  const double worst = got.numel() == 0 ? 0.0 : (g - mean).abs().max().item<double>() / std::fabs(mean);
  out["count"] = got.numel();
  out["worst_rel_error"] = worst;
  out["ok"] = got.numel() == want_n && worst <= tolerance(c);
  out["measured"] =
      "holds " + std::to_string(got.numel()) + " number" + (got.numel() == 1 ? "" : "s") +
      (got.numel() == 0 ? "" : ", the farthest " + num(100 * worst, "%.2f") + "% from the step's mean");
  return out;
}

// ex09.1: one row [1, 4, 1, 64] drawn per step (3 warm-up steps, then the profiled ones),
// written into the cache at positions 0, 1, ...; `total` sums the rows written so far.
at::Tensor cache_rows(const ReferenceContext& c) {
  const Draw r(c);
  std::vector<at::Tensor> rows;
  for (int i = 0; i < 3 + c.steps_run; ++i) rows.push_back(r.randn({1, 4, 1, 64}));
  return at::cat(rows, 2);
}
json cache_written(const ReferenceContext& c, const at::Tensor& got) {
  const at::Tensor want = cache_rows(c);
  const int64_t n = want.size(2);
  json out = {{"what", "the cache's first " + std::to_string(n) + " positions hold the " + std::to_string(n) +
                           " rows, in the order they were drawn"}};
  if (!got.defined() || got.dim() != 4 || got.size(0) != 1 || got.size(1) != 4 || got.size(3) != 64 ||
      got.size(2) < n) {
    out["ok"] = false;
    out["measured"] = "is not a [1, 4, >= " + std::to_string(n) + ", 64] cache";
    return out;
  }
  // A copy is exact: the rows must come back bit for bit.
  const double diff = (d(got.narrow(2, 0, n)) - d(want)).abs().max().item<double>();
  out["max_abs_diff"] = diff;
  out["ok"] = diff == 0.0;
  out["measured"] = diff == 0.0 ? "holds the rows at their positions"
                                : "differs from the rows drawn (max |diff| " + num(diff) + ")";
  return out;
}
json cache_total(const ReferenceContext& c, const at::Tensor& got) {
  const at::Tensor rows = d(cache_rows(c));
  json out = {{"what", "the sum of the " + std::to_string(rows.size(2)) + " rows written"}};
  if (!got.defined() || got.numel() != 1) {
    out["ok"] = false;
    out["measured"] = got.defined() ? "is not one number" : "is an undefined tensor";
    return out;
  }
  const double want = rows.sum().item<double>(), value = d(got).sum().item<double>();
  // A sum of K draws of N(0, 1) is ~sqrt(K) in size; bf16 rounds the result to ~0.4%.
  const double tol = tolerance(c) * (std::fabs(want) + std::sqrt(static_cast<double>(rows.numel())));
  out["ok"] = std::fabs(value - want) <= tol;
  out["measured"] = "is " + num(value) + " (the rows sum to " + num(want) + ", +- " + num(tol) + ")";
  return out;
}

// ex09.2: RMSNorm with a gain of ones, y = x / sqrt(mean(x^2) + 1e-5).
json rms_norm_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor x = r.randn({1, 1, 2048});
  return compare(c, got, rms(d(x), 1e-5), "x / sqrt(mean(x^2) + eps)");
}

// ex10.1: chapter 10's decode body, y = x + (silu(g) * u) @ down^T with [g | u] = rms(x) @ w^T.
json decode_body_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const int64_t dim = 2048;
  const at::Tensor x = r.randn({1, dim});
  const at::Tensor w = r.randn({2 * dim, dim}).mul_(0.02), down = r.randn({dim, dim}).mul_(0.02);
  const at::Tensor gu = at::matmul(rms(d(x), 1e-5), d(w).t());
  const at::Tensor h = at::silu(gu.narrow(-1, 0, dim)) * gu.narrow(-1, dim, dim);
  return compare(c, got, d(x) + at::matmul(h, d(down).t()), "x + (silu(g) * u) @ down^T");
}

// ex10.2: y = x + a @ W^T.
json residual_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor x = r.randn({8, 512}), a = r.randn({8, 512}), w = r.randn({512, 512});
  return compare(c, got, d(x) + at::matmul(d(a), d(w).t()), "x + a @ W^T");
}

// ex11.1: y = W x, x [512], W [2048, 512].
json gemv_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor x = r.randn({512}), w = r.randn({2048, 512});
  return compare(c, got, at::matmul(d(w), d(x)), "W x");
}

// ex11.2: y = (rms(x) * g) @ W^T, g = rand + 0.5.
json norm_gemv_y(const ReferenceContext& c, const at::Tensor& got) {
  const Draw r(c);
  const at::Tensor x = r.randn({1, 512}), g = r.rand({512}) + 0.5, w = r.randn({1536, 512});
  return compare(c, got, at::matmul(rms(d(x), 1e-5) * d(g), d(w).t()), "(rms(x) * g) @ W^T");
}

using Reference = std::function<json(const ReferenceContext&, const at::Tensor&)>;
const std::map<std::pair<std::string, std::string>, Reference>& references() {
  static const std::map<std::pair<std::string, std::string>, Reference> r = [] {
    std::map<std::pair<std::string, std::string>, Reference> m;
    const Reference mm_add = [](const ReferenceContext& c, const at::Tensor& g) {
      return matmul_add_y(c, g);
    };
    for (const char* e : {"ex01_2_named_region", "ex01_3_dead_window", "ex02_1_warm_up",
                          "ex02_2_buffer_request", "ex02_3_schedule", "ex04_1_tflops_by_hand",
                          "ex04_2_distribution", "ex04_3_hidden_sync", "ex05_1_addmm", "ex05_2_cuda_graph"})
      m[{e, "y"}] = mm_add;
    m[{"ex01_1_hot_loop", "y"}] = hot_loop_y;
    m[{"ex03_1_batch_axis", "y"}] = [](const ReferenceContext& c, const at::Tensor& g) {
      return matmul_add_y(c, g, 8);
    };
    m[{"ex03_2_fold_into_mm", "y"}] = one_weight_y;
    m[{"ex06_1_bias_epilogue", "y"}] = [](const ReferenceContext& c, const at::Tensor& g) {
      return linear_y(c, g, true);
    };
    m[{"ex06_2_view_is_free", "y"}] = [](const ReferenceContext& c, const at::Tensor& g) {
      return linear_y(c, g, false);
    };
    m[{"ex07_1_gate_up_together", "y"}] = geglu_y;
    m[{"ex07_2_in_place_is_not_fused", "y"}] = gelu_mul_y;
    m[{"ex08_1_in_place_update", "w"}] = sgd_w;
    m[{"ex08_2_keep_the_number", "curve"}] = curve_means;
    m[{"ex09_1_static_cache", "cache"}] = cache_written;
    m[{"ex09_1_static_cache", "total"}] = cache_total;
    m[{"ex09_2_one_op_norm", "y"}] = rms_norm_y;
    m[{"ex10_1_capture_decode", "y"}] = decode_body_y;
    m[{"ex10_2_residual_epilogue", "y"}] = residual_y;
    m[{"ex11_1_gemv_reads_once", "y"}] = gemv_y;
    m[{"ex11_2_gain_in_the_weight", "y"}] = norm_gemv_y;
    return m;
  }();
  return r;
}

}  // namespace

bool has_reference(const std::string& exercise, const std::string& key) {
  return references().count({exercise, key}) > 0;
}

nlohmann::json verify_result(const ReferenceContext& c, const std::string& key, const at::Tensor& got) {
  const auto it = references().find({c.exercise, key});
  if (it == references().end())
    return {{"ok", false}, {"what", "no reference for " + key}, {"measured", "cannot be verified"}};
  try {
    return it->second(c, got);
  } catch (const std::exception& e) {
    return {{"ok", false},
            {"what", "the reference of " + key},
            {"measured", std::string("cannot be compared: ") + e.what()}};
  }
}

}  // namespace ex
