// The Llama-style decoder of chapters 09 and 10: see llm.hpp.
#include "llm.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/rms_norm.h>

#include <cmath>
#include <stdexcept>

namespace llm {

namespace {

std::vector<Config> all_configs() {
  Config tiny;  // CPU and CI: the same structure, ~5 M parameters
  tiny.name = "tiny";
  tiny.dim = 256;
  tiny.layers = 4;
  tiny.heads = 4;
  tiny.kv_heads = 2;
  tiny.mlp = 704;  // 2.75 x dim, as 5632 / 2048
  tiny.vocab = 4096;
  Config b1;  // TinyLlama-1.1B's published shape
  b1.name = "1b";
  b1.dim = 2048;
  b1.layers = 22;
  b1.heads = 32;
  b1.kv_heads = 4;
  b1.mlp = 5632;
  b1.vocab = 32000;
  return {tiny, b1};
}

// RMSNorm as plain tensor ops (as Llama's reference code writes it): in fp32, then back.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  const torch::Tensor xf = x.to(torch::kFloat);
  const torch::Tensor y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return y.to(x.scalar_type()) * w;
}

// Rotate-half RoPE: [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin]. The halves are swapped
// with a flip over a [2, head_dim/2] view (one kernel, no cat), and sin_signed = [-sin, sin].
torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin_signed) {
  const int64_t hd = x.size(-1);
  const torch::Tensor swapped = torch::flip(x.unflatten(-1, {2, hd / 2}), {-2}).flatten(-2);
  return x * cos + swapped * sin_signed;
}

}  // namespace

const std::vector<std::string>& config_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& c : all_configs()) n.push_back(c.name);
    return n;
  }();
  return names;
}

Config config(const std::string& name) {
  for (const auto& c : all_configs())
    if (c.name == name) return c;
  std::string known;
  for (const auto& n : config_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown model configuration '" + name + "' (known: " + known + ")");
}

int64_t parameters_read_per_token(const Config& c) {
  const int64_t per_layer =
      c.qkv_out() * c.dim + c.dim * c.dim + 2 * c.mlp * c.dim + c.dim * c.mlp + 2 * c.dim;
  return c.layers * per_layer + c.dim /* final norm */ + c.vocab * c.dim /* LM head */;
}

int64_t parameters(const Config& c) { return parameters_read_per_token(c) + c.vocab * c.dim /* embedding */; }

double prefill_flop_per_layer(const Config& c, int64_t t) {
  const double T = static_cast<double>(t);
  const double gemm = 2.0 * T * c.dim * (c.qkv_out() + c.dim + 2 * c.mlp + c.mlp);
  const double attention = 2.0 * T * T * c.dim;  // QK^T and PV, 4*T*T*dim, halved by the causal mask
  return gemm + attention;
}

KvCache KvCache::preallocated(const Config& c, int64_t batch, int64_t capacity, torch::TensorOptions o) {
  KvCache kv;
  kv.capacity = capacity;
  for (int64_t l = 0; l < c.layers; ++l) {
    kv.k.push_back(torch::zeros({batch, c.kv_heads, capacity, c.head_dim()}, o));
    kv.v.push_back(torch::zeros({batch, c.kv_heads, capacity, c.head_dim()}, o));
  }
  return kv;
}

KvCache KvCache::grown_by_cat(const Config& c, int64_t batch, torch::TensorOptions o) {
  KvCache kv;
  kv.growing = true;
  for (int64_t l = 0; l < c.layers; ++l) {
    kv.k.push_back(torch::empty({batch, c.kv_heads, 0, c.head_dim()}, o));
    kv.v.push_back(torch::empty({batch, c.kv_heads, 0, c.head_dim()}, o));
  }
  return kv;
}

int64_t KvCache::bytes() const {
  int64_t b = 0;
  for (const auto* side : {&k, &v})
    for (const auto& t : *side) b += t.numel() * static_cast<int64_t>(t.element_size());
  return b;
}

Model::Model(const Config& c, torch::TensorOptions o, uint64_t seed, int64_t capacity)
    : cfg_(c), opts_(o), capacity_(capacity) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  auto proj = [&](int64_t out, int64_t in) {
    return torch::randn({out, in}, o).mul_(1.0 / std::sqrt(static_cast<double>(in)));
  };
  embed_ = torch::randn({c.vocab, c.dim}, o);
  for (int64_t l = 0; l < c.layers; ++l) {
    Layer L;
    L.attn_norm = torch::ones({c.dim}, o);
    L.wqkv = proj(c.qkv_out(), c.dim);
    L.wo = proj(c.dim, c.dim);
    L.mlp_norm = torch::ones({c.dim}, o);
    L.w_gate_up = proj(2 * c.mlp, c.dim);  // gate rows first, then up
    L.w_down = proj(c.dim, c.mlp);
    layers_.push_back(std::move(L));
  }
  final_norm_ = torch::ones({c.dim}, o);
  lm_head_ = proj(c.vocab, c.dim);
  // RoPE tables, computed in fp32 on the CPU, stored in the model's dtype on its device.
  const int64_t hd = c.head_dim();
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat);
  const torch::Tensor inv_freq =
      torch::pow(c.rope_theta, -torch::arange(0, hd, 2, f32) / static_cast<double>(hd));  // [hd/2]
  const torch::Tensor angles = torch::outer(torch::arange(capacity, f32), inv_freq);      // [cap, hd/2]
  cos_ = torch::cat({angles.cos(), angles.cos()}, -1).to(o.device(), o.dtype().toScalarType());
  sin_signed_ = torch::cat({-angles.sin(), angles.sin()}, -1).to(o.device(), o.dtype().toScalarType());
  arange_ = torch::arange(capacity, torch::TensorOptions().dtype(torch::kLong).device(o.device()));
}

int64_t Model::weight_bytes() const {
  int64_t n = embed_.numel() + final_norm_.numel() + lm_head_.numel();
  for (const auto& L : layers_)
    n += L.attn_norm.numel() + L.wqkv.numel() + L.wo.numel() + L.mlp_norm.numel() + L.w_gate_up.numel() +
         L.w_down.numel();
  return n * static_cast<int64_t>(embed_.element_size());
}

torch::Tensor Model::forward(const torch::Tensor& tokens, const torch::Tensor& positions, int64_t host_len,
                             Attn attn, bool prefill, KvCache& cache) const {
  const Config& c = cfg_;
  const int64_t B = tokens.size(0), T = tokens.size(1), H = c.heads, KV = c.kv_heads, hd = c.head_dim();
  torch::Tensor x = torch::embedding(embed_, tokens);         // [B, T, dim]
  const torch::Tensor cos = cos_.index_select(0, positions);  // [T, hd]: broadcasts over [B, H, T, hd]
  const torch::Tensor sin = sin_signed_.index_select(0, positions);
  std::optional<torch::Tensor> mask;
  if (!prefill && attn == Attn::Masked && !cache.growing)
    mask = arange_.view({1, capacity_}).le(positions.view({T, 1}));  // [T, capacity]: true = attend
  const bool fused = fused_;
  auto norm = [&](const torch::Tensor& t, const torch::Tensor& w) {
    return fused ? at::rms_norm(t, {c.dim}, w, c.eps) : rms_norm(t, w, c.eps);
  };
  // x + linear(a, w): a GEMM and an add kernel, or one GEMM that adds its product to x in place
  // (addmm_: beta = 1, the residual is the GEMM's C). Out-of-place addmm would first copy x into
  // a new output: a copy instead of an add.
  auto project_add = [&](torch::Tensor& res, const torch::Tensor& a, const torch::Tensor& w) {
    if (!fused) return res + torch::linear(a, w);
    res.view({-1, res.size(-1)}).addmm_(a.reshape({-1, a.size(-1)}), w.t());
    return res;
  };
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    torch::Tensor h = norm(x, L.attn_norm);
    const torch::Tensor qkv = torch::linear(h, L.wqkv);  // [B, T, (H + 2 KV) hd]
    torch::Tensor q, k;
    if (fused) {  // q and k rotated together: [B, H + KV, T, hd]
      const torch::Tensor qk =
          rope(qkv.narrow(-1, 0, (H + KV) * hd).view({B, T, H + KV, hd}).transpose(1, 2), cos, sin);
      q = qk.narrow(1, 0, H);
      k = qk.narrow(1, H, KV);
    } else {
      q = rope(qkv.narrow(-1, 0, H * hd).view({B, T, H, hd}).transpose(1, 2), cos, sin);
      k = rope(qkv.narrow(-1, H * hd, KV * hd).view({B, T, KV, hd}).transpose(1, 2), cos, sin);
    }
    const torch::Tensor v = qkv.narrow(-1, (H + KV) * hd, KV * hd).view({B, T, KV, hd}).transpose(1, 2);
    torch::Tensor keys, values;
    if (cache.growing) {  // a new tensor every token: everything so far is copied again
      cache.k[l] = torch::cat({cache.k[l], k}, 2);
      cache.v[l] = torch::cat({cache.v[l], v}, 2);
      keys = prefill ? k : cache.k[l];
      values = prefill ? v : cache.v[l];
    } else {  // preallocated: write this token's row in place
      cache.k[l].index_copy_(2, positions, k);
      cache.v[l].index_copy_(2, positions, v);
      if (prefill) {
        keys = k;
        values = v;
      } else if (attn == Attn::Sliced) {
        keys = cache.k[l].narrow(2, 0, host_len);
        values = cache.v[l].narrow(2, 0, host_len);
      } else {
        keys = cache.k[l];
        values = cache.v[l];
      }
    }
    torch::Tensor a = torch::scaled_dot_product_attention(q, keys, values, mask, /*dropout_p=*/0.0,
                                                          /*is_causal=*/prefill, /*scale=*/std::nullopt,
                                                          /*enable_gqa=*/true);
    a = a.transpose(1, 2).reshape({B, T, c.dim});
    x = project_add(x, a, L.wo);
    h = norm(x, L.mlp_norm);
    const torch::Tensor gu = torch::linear(h, L.w_gate_up);  // [B, T, 2 mlp]
    x = project_add(x, torch::silu(gu.narrow(-1, 0, c.mlp)) * gu.narrow(-1, c.mlp, c.mlp), L.w_down);
  }
  x = norm(x.narrow(1, T - 1, 1), final_norm_);  // the last position only
  return torch::linear(x, lm_head_).view({B, c.vocab});
}

torch::Tensor Model::prefill(const torch::Tensor& tokens, KvCache& cache) const {
  const int64_t T = tokens.size(1);
  TORCH_CHECK(T <= capacity_, "prompt of ", T, " tokens exceeds the capacity ", capacity_);
  return forward(tokens, arange_.narrow(0, 0, T), T, Attn::Sliced, /*prefill=*/true, cache);
}

torch::Tensor Model::decode(const torch::Tensor& token, int64_t pos, KvCache& cache) const {
  TORCH_CHECK(pos < capacity_, "position ", pos, " is past the capacity ", capacity_);
  return forward(token, arange_.narrow(0, pos, 1), pos + 1, Attn::Sliced, /*prefill=*/false, cache);
}

torch::Tensor Model::decode_static(const torch::Tensor& token, const torch::Tensor& pos,
                                   KvCache& cache) const {
  TORCH_CHECK(!cache.growing, "decode_static needs a preallocated cache");
  return forward(token, pos, capacity_, Attn::Masked, /*prefill=*/false, cache);
}

torch::Tensor Model::generate(const torch::Tensor& prompt, int64_t n, KvCache& cache) const {
  const int64_t T = prompt.size(1);
  torch::Tensor next = prefill(prompt, cache).argmax(-1, /*keepdim=*/true);
  std::vector<torch::Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(next);
    if (i + 1 < n) next = decode(next, T + i, cache).argmax(-1, true);
  }
  return torch::cat(out, 1);
}

torch::Tensor random_prompt(const Config& c, int64_t batch, int64_t tokens, uint64_t seed,
                            torch::Device device) {
  auto gen = at::detail::createCPUGenerator(seed);
  return torch::randint(0, c.vocab, {batch, tokens}, gen, torch::TensorOptions().dtype(torch::kLong))
      .to(device);
}

LogitsMatch compare_logits(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor x = a.to(torch::kCPU, torch::kFloat), y = b.to(torch::kCPU, torch::kFloat);
  LogitsMatch m;
  m.max_abs_diff = (x - y).abs().max().item<double>();
  m.max_abs = x.abs().max().item<double>();
  m.rel = m.max_abs > 0 ? m.max_abs_diff / m.max_abs : 0;
  m.cosine = torch::cosine_similarity(x.flatten(), y.flatten(), 0).item<double>();
  m.argmax_agree = x.argmax(-1).eq(y.argmax(-1)).to(torch::kFloat).mean().item<double>();
  return m;
}

}  // namespace llm
