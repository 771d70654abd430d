// The harness's own references for the exercises' results (reference.hpp).
#include "reference.hpp"

#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <torch/utils.h>  // torch::manual_seed

#include <cmath>
#include <cstdio>

namespace ex {

namespace {

std::string num(double v, const char* fmt = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

double l2(const at::Tensor& t) { return std::sqrt(t.to(at::kDouble).pow(2).sum().item<double>()); }

bool same_shape(const at::Tensor& got, at::IntArrayRef want, nlohmann::json& out) {
  if (got.defined() && got.sizes() == want) return true;
  out["ok"] = false;
  out["measured"] = got.defined() ? "has the wrong shape" : "is an undefined tensor";
  return false;
}

// ex01.1: y = x @ w + b, then y += b 16 times (one per layer): y = x @ w + 17 b.
nlohmann::json hot_loop_y(const ReferenceContext& c, const at::Tensor& got) {
  nlohmann::json out = {{"what", "y = x @ w + 17 b (one add, then 16 add_ of b)"}};
  const int64_t n = c.size;
  torch::manual_seed(0);
  const at::Tensor x = at::randn({n, n}, c.options), w = at::randn({n, n}, c.options),
                   b = at::randn({n, n}, c.options);
  if (!same_shape(got, {n, n}, out)) return out;
  const at::Tensor want = at::matmul(x.to(at::kDouble), w.to(at::kDouble)) + 17.0 * b.to(at::kDouble);
  const double rel = l2(got.to(at::kDouble) - want) / l2(want);
  out["rel_error"] = rel;
  // bf16 on a GPU: 17 roundings of ~0.4% each, well inside 5%; the loop left out is ~85% off.
  out["ok"] = rel <= 0.05;
  out["measured"] = "is " + num(100 * rel, "%.2f") + "% from x @ w + 17 b";
  return out;
}

// ex08.1: w = w0 - 0.01 g per update, 3 updates before the profile and one per profiled step.
// The number of updates w holds, estimated from every element (sum((w0 - w) g) / sum(g g) / 0.01):
// rounding averages out over the 512K elements, an update that changes nothing does not.
nlohmann::json sgd_w(const ReferenceContext& c, const at::Tensor& got) {
  const int want_updates = 3 + c.steps_run;
  nlohmann::json out = {{"what", "w = w0 - 0.01 g x " + std::to_string(want_updates) + " updates (3 + " +
                                     std::to_string(c.steps_run) + " profiled steps)"}};
  torch::manual_seed(0);
  const at::Tensor w0 = at::randn({512, 1024}, c.options), g = at::randn({512, 1024}, c.options);
  if (!same_shape(got, {512, 1024}, out)) return out;
  const at::Tensor gd = g.to(at::kDouble), moved = w0.to(at::kDouble) - got.to(at::kDouble);
  const double updates = (moved * gd).sum().item<double>() / (gd * gd).sum().item<double>() / 0.01;
  const double residual = l2(moved - 0.01 * updates * gd) / l2(w0);
  out["updates"] = updates;
  out["residual"] = residual;
  out["ok"] = std::fabs(updates - want_updates) <= 0.25 && residual <= 0.05;
  out["measured"] = "holds " + num(updates, "%.2f") + " updates of -0.01 g (residual " +
                    num(100 * residual, "%.2f") + "% of |w0|)";
  return out;
}

}  // namespace

nlohmann::json verify_result(const ReferenceContext& c, const std::string& key, const at::Tensor& got) {
  if (c.exercise == "ex01_1_hot_loop" && key == "y") return hot_loop_y(c, got);
  if (c.exercise == "ex08_1_in_place_update" && key == "w") return sgd_w(c, got);
  return {{"ok", false}, {"what", "no reference for " + key}, {"measured", "cannot be verified"}};
}

}  // namespace ex
