// The harness's references for the exercises' results (exercises/common/reference.cpp): for
// every exercise value, the workload computed as the reference solution computes it passes, and
// the workload with a part deleted or neutralised fails -- in fp32 (a CPU run) and in bf16 (the
// dtype of a GPU run, computed here on the CPU). Each case draws its inputs as the exercise
// program does: seed 0, then the program's randn/rand calls in its order.
#include <catch2/catch_test_macros.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <torch/utils.h>  // torch::manual_seed

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercise/catalog.hpp"
#include "reference.hpp"

namespace {

using at::Tensor;

struct Case {
  std::string exercise, key;
  int64_t size = 64;  // --size (the N of chapters 01-05)
  int steps_run = 5;  // the profiled steps (1,1,3: five)
  // The program's workload from its inputs: the reference solution's result, then wrong ones.
  std::function<Tensor(const at::TensorOptions&, int64_t n, int steps)> right;
  std::vector<std::pair<std::string, std::function<Tensor(const at::TensorOptions&, int64_t n, int steps)>>>
      wrong;
};

Tensor rn(at::IntArrayRef s, const at::TensorOptions& o) { return at::randn(s, o); }
Tensor rms(const Tensor& x, double eps) { return x * at::rsqrt(x.pow(2).mean(-1, true) + eps); }
Tensor from_vector(const std::vector<double>& v) {
  Tensor t = at::empty({static_cast<int64_t>(v.size())}, at::kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t;
}

// Chapters 01-05's step and its mistakes: y = x @ w + b.
Case matmul_add(const std::string& name) {
  Case c{name, "y"};
  c.right = [](const at::TensorOptions& o, int64_t n, int) {
    const Tensor x = rn({n, n}, o), w = rn({n, n}, o), b = rn({n, n}, o);
    return at::add(at::matmul(x, w), b);
  };
  c.wrong = {{"the add deleted",
              [](const at::TensorOptions& o, int64_t n, int) {
                const Tensor x = rn({n, n}, o), w = rn({n, n}, o);
                return at::matmul(x, w);
              }},
             {"nothing computed", [](const at::TensorOptions& o, int64_t n, int) {
                return at::zeros({n, n}, o);
              }}};
  return c;
}

// The cache's rows, one per step (3 warm-up steps and the profiled ones), as ex09.1 draws them.
Tensor static_cache(const at::TensorOptions& o, int steps, bool overwrite) {
  Tensor cache = at::zeros({1, 4, 256, 64}, o);
  for (int i = 0; i < 3 + steps; ++i) cache.narrow(2, overwrite ? 0 : i, 1).copy_(rn({1, 4, 1, 64}, o));
  return cache;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (const char* e : {"ex01_2_named_region", "ex01_3_dead_window", "ex02_1_warm_up",
                        "ex02_2_buffer_request", "ex02_3_schedule", "ex04_1_tflops_by_hand",
                        "ex04_2_distribution", "ex04_3_hidden_sync", "ex05_1_addmm", "ex05_2_cuda_graph"})
    v.push_back(matmul_add(e));
  {
    Case c{"ex01_1_hot_loop", "y"};
    c.right = [](const at::TensorOptions& o, int64_t n, int) {
      const Tensor x = rn({n, n}, o), w = rn({n, n}, o), b = rn({n, n}, o);
      Tensor y = at::add(at::matmul(x, w), b);
      for (int i = 0; i < 16; ++i) y.add_(b);
      return y;
    };
    c.wrong = {{"the add_ loop deleted", [](const at::TensorOptions& o, int64_t n, int) {
                  const Tensor x = rn({n, n}, o), w = rn({n, n}, o), b = rn({n, n}, o);
                  return at::add(at::matmul(x, w), b);
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex03_1_batch_axis", "y"};
    c.right = [](const at::TensorOptions& o, int64_t n, int) {
      const Tensor x = rn({8, n, n}, o), w = rn({8, n, n}, o), b = rn({8, n, n}, o);
      return at::add(at::matmul(x, w), b);
    };
    c.wrong = {{"no batch axis (the stub)", [](const at::TensorOptions& o, int64_t n, int) {
                  const Tensor x = rn({n, n}, o), w = rn({n, n}, o), b = rn({n, n}, o);
                  return at::add(at::matmul(x, w), b);
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex03_2_fold_into_mm", "y"};
    c.right = [](const at::TensorOptions& o, int64_t n, int) {
      const Tensor x = rn({8, n, n}, o), w1 = rn({n, n}, o), b = rn({8, n, n}, o);
      return at::add(at::matmul(x, w1), b);
    };
    c.wrong = {{"the add deleted", [](const at::TensorOptions& o, int64_t n, int) {
                  const Tensor x = rn({8, n, n}, o), w1 = rn({n, n}, o);
                  return at::matmul(x, w1);
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex06_1_bias_epilogue", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({1024, 32}, o), w = rn({64, 32}, o), b = rn({64}, o);
      return at::addmm(b, x, w.t());
    };
    c.wrong = {{"the bias left out", [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({1024, 32}, o), w = rn({64, 32}, o);
                  return at::mm(x, w.t());
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex06_2_view_is_free", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({1024, 32}, o), w = rn({64, 32}, o);
      return at::mm(x, w.t());
    };
    c.wrong = {{"nothing computed",
                [](const at::TensorOptions& o, int64_t, int) {
                  return at::zeros({1024, 64}, o);
                }},
               {"a weight of its own", [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({1024, 32}, o);
                  return at::mm(x, rn({32, 64}, o));
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex07_1_gate_up_together", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({2, 64, 128}, o), wg = rn({512, 128}, o), wu = rn({512, 128}, o),
                   wd = rn({128, 512}, o);
      const Tensor gu = at::matmul(x, at::cat({wg, wu}).t());
      return at::matmul(at::gelu(gu.narrow(-1, 0, 512), "tanh").mul(gu.narrow(-1, 512, 512)), wd.t());
    };
    c.wrong = {{"gelu left out",
                [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({2, 64, 128}, o), wg = rn({512, 128}, o), wu = rn({512, 128}, o),
                               wd = rn({128, 512}, o);
                  return at::matmul(at::matmul(x, wg.t()).mul(at::matmul(x, wu.t())), wd.t());
                }},
               {"the up projection left out", [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({2, 64, 128}, o), wg = rn({512, 128}, o);
                  rn({512, 128}, o);
                  const Tensor wd = rn({128, 512}, o);
                  return at::matmul(at::gelu(at::matmul(x, wg.t()), "tanh"), wd.t());
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex07_2_in_place_is_not_fused", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor g = rn({1024, 1024}, o), u = rn({1024, 1024}, o);
      return at::gelu(g, "tanh").mul_(u);
    };
    c.wrong = {{"the multiply left out", [](const at::TensorOptions& o, int64_t, int) {
                  return at::gelu(rn({1024, 1024}, o), "tanh");
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex08_1_in_place_update", "w"};
    c.right = [](const at::TensorOptions& o, int64_t, int steps) {
      Tensor w = rn({512, 1024}, o);
      const Tensor g = rn({512, 1024}, o);
      for (int i = 0; i < 3 + steps; ++i) w.sub_(g, 0.01);
      return w;
    };
    c.wrong = {{"an update that changes nothing",
                [](const at::TensorOptions& o, int64_t, int steps) {
                  Tensor w = rn({512, 1024}, o);
                  const Tensor g = rn({512, 1024}, o);
                  for (int i = 0; i < 3 + steps; ++i) w.sub_(g, 0.0);
                  return w;
                }},
               {"the warm-up updates left out", [](const at::TensorOptions& o, int64_t, int steps) {
                  Tensor w = rn({512, 1024}, o);
                  const Tensor g = rn({512, 1024}, o);
                  for (int i = 0; i < steps; ++i) w.sub_(g, 0.01);
                  return w;
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex08_2_keep_the_number", "curve"};
    c.right = [](const at::TensorOptions& o, int64_t, int steps) {
      const Tensor x = rn({512, 512}, o), w = rn({512, 512}, o);
      std::vector<double> curve;
      for (int i = 0; i < 3 + steps; ++i)
        curve.push_back(at::gelu(x.matmul(w), "tanh").mean().item<double>());
      return from_vector(curve);
    };
    c.wrong = {{"nothing kept", [](const at::TensorOptions&, int64_t, int) { return from_vector({}); }},
               {"the profiled steps only",
                [](const at::TensorOptions& o, int64_t, int steps) {
                  const Tensor x = rn({512, 512}, o), w = rn({512, 512}, o);
                  return from_vector(
                      std::vector<double>(steps, at::gelu(x.matmul(w), "tanh").mean().item<double>()));
                }},
               {"gelu left out", [](const at::TensorOptions& o, int64_t, int steps) {
                  const Tensor x = rn({512, 512}, o), w = rn({512, 512}, o);
                  return from_vector(std::vector<double>(3 + steps, x.matmul(w).mean().item<double>()));
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex09_1_static_cache", "cache"};
    c.right = [](const at::TensorOptions& o, int64_t, int steps) { return static_cache(o, steps, false); };
    c.wrong = {{"every row written at position 0",
                [](const at::TensorOptions& o, int64_t, int steps) { return static_cache(o, steps, true); }},
               {"an empty cache", [](const at::TensorOptions& o, int64_t, int) {
                  return at::zeros({1, 4, 0, 64}, o);
                }}};
    v.push_back(c);
    Case t{"ex09_1_static_cache", "total"};
    t.right = [](const at::TensorOptions& o, int64_t, int steps) {
      return static_cache(o, steps, false).narrow(2, 0, 3 + steps).sum();
    };
    t.wrong = {{"the last row's sum only", [](const at::TensorOptions& o, int64_t, int steps) {
                  return static_cache(o, steps, false).narrow(2, 2 + steps, 1).sum();
                }}};
    v.push_back(t);
  }
  {
    Case c{"ex09_2_one_op_norm", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({1, 1, 2048}, o);
      return at::rms_norm(x, {2048}, at::ones({2048}, o), 1e-5);
    };
    c.wrong = {{"no normalisation",
                [](const at::TensorOptions& o, int64_t, int) {
                  return rn({1, 1, 2048}, o) * 2;
                }},
               {"the mean of x, not of x^2", [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({1, 1, 2048}, o);
                  return x * at::rsqrt(x.mean(-1, true).abs() + 1e-5);
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex10_1_capture_decode", "y"};
    auto body = [](const at::TensorOptions& o, bool residual, bool mlp) {
      const int64_t dim = 2048;
      const Tensor x = rn({1, dim}, o);
      const Tensor w = rn({2 * dim, dim}, o).mul_(0.02), down = rn({dim, dim}, o).mul_(0.02);
      const Tensor h = rms(x, 1e-5);
      const Tensor gu = at::linear(h, w);
      const Tensor m = at::linear(at::silu(gu.narrow(-1, 0, dim)) * gu.narrow(-1, dim, dim), down);
      return (residual ? x : at::zeros_like(x)) + (mlp ? m : at::zeros_like(m));
    };
    c.right = [body](const at::TensorOptions& o, int64_t, int) { return body(o, true, true); };
    c.wrong = {{"the residual left out",
                [body](const at::TensorOptions& o, int64_t, int) { return body(o, false, true); }},
               {"the MLP left out",
                [body](const at::TensorOptions& o, int64_t, int) { return body(o, true, false); }}};
    v.push_back(c);
  }
  {
    Case c{"ex10_2_residual_epilogue", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({8, 512}, o), a = rn({8, 512}, o), w = rn({512, 512}, o);
      return at::addmm(x, a, w.t());
    };
    c.wrong = {{"the residual left out", [](const at::TensorOptions& o, int64_t, int) {
                  rn({8, 512}, o);
                  const Tensor a = rn({8, 512}, o), w = rn({512, 512}, o);
                  return at::mm(a, w.t());
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex11_1_gemv_reads_once", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({512}, o), w = rn({2048, 512}, o);
      return at::mv(w, x);
    };
    c.wrong = {{"the transpose (x summed against columns)", [](const at::TensorOptions& o, int64_t, int) {
                  rn({512}, o);
                  const Tensor w = rn({2048, 512}, o);
                  return at::mv(w, rn({512}, o));
                }}};
    v.push_back(c);
  }
  {
    Case c{"ex11_2_gain_in_the_weight", "y"};
    c.right = [](const at::TensorOptions& o, int64_t, int) {
      const Tensor x = rn({1, 512}, o), g = at::rand({512}, o) + 0.5, w = rn({1536, 512}, o);
      return at::linear(rms(x, 1e-5), w * g);
    };
    c.wrong = {{"the gain left out",
                [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({1, 512}, o);
                  at::rand({512}, o);
                  const Tensor w = rn({1536, 512}, o);
                  return at::linear(rms(x, 1e-5), w);
                }},
               {"the normalisation left out", [](const at::TensorOptions& o, int64_t, int) {
                  const Tensor x = rn({1, 512}, o), g = at::rand({512}, o) + 0.5, w = rn({1536, 512}, o);
                  return at::linear(x, w * g);
                }}};
    v.push_back(c);
  }
  return v;
}

nlohmann::json verify(const Case& c, const at::TensorOptions& o, const Tensor& got) {
  ex::ReferenceContext ctx;
  ctx.exercise = c.exercise;
  ctx.size = c.size;
  ctx.steps_run = c.steps_run;
  ctx.options = o;
  return ex::verify_result(ctx, c.key, got);
}

}  // namespace

TEST_CASE("every value an exercise hands in has a reference, and every exercise hands one in",
          "[exercises][cpu]") {
  const exercise::Catalog catalog =
      exercise::load_catalog(std::string(WORKBOOK_ROOT) + "/exercises/exercises.json");
  std::vector<std::pair<std::string, std::string>> tested;
  for (const Case& c : cases()) tested.emplace_back(c.exercise, c.key);
  for (const auto& e : catalog.exercises) {
    INFO(e.id);
    REQUIRE(e.workload.contains("values"));
    CHECK(!e.workload["values"].empty());
    for (const auto& key : e.workload["values"]) {
      INFO(key);
      CHECK(ex::has_reference(e.name, key.get<std::string>()));
      CHECK(std::find(tested.begin(), tested.end(), std::make_pair(e.name, key.get<std::string>())) !=
            tested.end());
    }
  }
  CHECK_FALSE(ex::has_reference("ex01_1_hot_loop", "z"));
}

TEST_CASE("the reference solution's result passes, a deleted or neutralised workload fails (fp32, bf16)",
          "[exercises][cpu]") {
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::TensorOptions o = at::TensorOptions().dtype(dtype);
    for (const Case& c : cases()) {
      INFO(c.exercise << " " << c.key << " in " << at::toString(dtype));
      torch::manual_seed(0);
      const Tensor right = c.right(o, c.size, c.steps_run);
      const nlohmann::json ok = verify(c, o, right);
      INFO(ok.dump());
      CHECK(ok.value("ok", false));
      CHECK(ok.value("measured", std::string()).find("cannot") == std::string::npos);
      for (const auto& [what, make] : c.wrong) {
        INFO("wrong: " << what);
        torch::manual_seed(0);
        const nlohmann::json bad = verify(c, o, make(o, c.size, c.steps_run));
        INFO(bad.dump());
        CHECK_FALSE(bad.value("ok", true));
      }
      const nlohmann::json undefined = verify(c, o, Tensor());
      CHECK_FALSE(undefined.value("ok", true));
    }
  }
}

TEST_CASE("a value without a reference cannot pass", "[exercises][cpu]") {
  ex::ReferenceContext ctx;
  ctx.exercise = "ex01_2_named_region";
  ctx.size = 8;
  ctx.options = at::TensorOptions().dtype(at::kFloat);
  const nlohmann::json r = ex::verify_result(ctx, "not_a_value", at::zeros({8, 8}));
  CHECK_FALSE(r.value("ok", true));
  CHECK(r.value("what", std::string()) == "no reference for not_a_value");
}
