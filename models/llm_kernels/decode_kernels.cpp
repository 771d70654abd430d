#include "decode_kernels.hpp"

#include <ATen/ops/rms_norm.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>  // the current stream, without CUDA headers

#include <cmath>
#include <stdexcept>

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace llmk {

namespace {

void* stream_of(const torch::Tensor& t) {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(t.device()).native_handle();
}

void check(const std::string& why) {
  if (!why.empty()) throw std::runtime_error(why);
}

const void* ptr_or_null(const torch::Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// Eager's RMSNorm (llm.cpp): in fp32, rounded, then times the weight.
torch::Tensor rms_norm_eager(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  const torch::Tensor xf = x.to(torch::kFloat);
  return (xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps)).to(x.scalar_type()) * w;
}

// Eager's rotate-half RoPE (llm.cpp).
torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin_signed) {
  const int64_t hd = x.size(-1);
  const torch::Tensor swapped = torch::flip(x.unflatten(-1, {2, hd / 2}), {-2}).flatten(-2);
  return x * cos + swapped * sin_signed;
}

}  // namespace

std::string kernels_unavailable(torch::Device device, torch::ScalarType dtype) {
  if (!compiled())
    return "this build has no CUDA compiler (nvcc) or no CUDA LibTorch, so the decode kernels were not "
           "built: "
           "their ATen equivalents run instead";
  if (!device.is_cuda())
    return "the decode kernels are CUDA kernels and this run is on the CPU: ATen equivalents run";
  if (dtype != torch::kBFloat16) return "the decode kernels are written for bf16: ATen equivalents run";
  return {};
}

void gemv_aten(const torch::Tensor& W, const torch::Tensor& x, torch::Tensor& y, const torch::Tensor& norm_w,
               double eps, Epilogue epi, const torch::Tensor& residual) {
  torch::Tensor in = x.reshape({1, -1});
  if (norm_w.defined()) in = rms_norm_eager(in, norm_w, eps);
  const torch::Tensor r = torch::linear(in, W).view({-1});
  const torch::Tensor out = y.view({-1});
  switch (epi) {
    case Epilogue::Store: out.copy_(r); break;
    case Epilogue::AddResidual: out.copy_(residual.view({-1}) + r); break;
    case Epilogue::SwiGLU: {
      const int64_t half = r.size(0) / 2;
      out.copy_(torch::silu(r.narrow(0, 0, half)) * r.narrow(0, half, half));
      break;
    }
  }
}

void gemv(const torch::Tensor& W, const torch::Tensor& x, torch::Tensor& y, const torch::Tensor& norm_w,
          double eps, Epilogue epi, const torch::Tensor& residual, const GemvConfig& cfg) {
  const int64_t n = W.size(0), k = W.size(1);
  if (x.numel() != k || y.numel() != (epi == Epilogue::SwiGLU ? n / 2 : n) ||
      (epi == Epilogue::AddResidual && (!residual.defined() || residual.numel() != n)))
    throw std::invalid_argument("llmk::gemv: shapes do not match W [n, k]");
  if (!kernels_unavailable(x.device(), x.scalar_type()).empty())
    return gemv_aten(W, x, y, norm_w, eps, epi, residual);
  TORCH_CHECK(W.is_contiguous() && x.is_contiguous() && y.is_contiguous(),
              "llmk::gemv: contiguous tensors only");
  check(llmk::gemv(W.data_ptr(), x.data_ptr(), y.data_ptr(), n, k, ptr_or_null(norm_w),
                   static_cast<float>(eps), epi, ptr_or_null(residual), stream_of(x), cfg));
}

void rope_kv_write_aten(const llm::Config& c, const torch::Tensor& qkv, const torch::Tensor& cos,
                        const torch::Tensor& sin_signed, const torch::Tensor& pos, torch::Tensor& q,
                        torch::Tensor& k_cache, torch::Tensor& v_cache) {
  const int64_t H = c.heads, KV = c.kv_heads, hd = c.head_dim();
  const torch::Tensor qk = qkv.narrow(-1, 0, (H + KV) * hd).view({1, H + KV, 1, hd});
  const torch::Tensor rot = rope(qk, cos.index_select(0, pos), sin_signed.index_select(0, pos));
  q.view({1, H, 1, hd}).copy_(rot.narrow(1, 0, H));
  k_cache.index_copy_(2, pos, rot.narrow(1, H, KV));
  v_cache.index_copy_(2, pos, qkv.narrow(-1, (H + KV) * hd, KV * hd).view({1, KV, 1, hd}));
}

void rope_kv_write(const llm::Config& c, const torch::Tensor& qkv, const torch::Tensor& cos,
                   const torch::Tensor& sin_signed, const torch::Tensor& pos, torch::Tensor& q,
                   torch::Tensor& k_cache, torch::Tensor& v_cache) {
  if (!kernels_unavailable(qkv.device(), qkv.scalar_type()).empty() || k_cache.size(0) != 1)
    return rope_kv_write_aten(c, qkv, cos, sin_signed, pos, q, k_cache, v_cache);
  check(llmk::rope_kv_write(qkv.data_ptr(), cos.data_ptr(), sin_signed.data_ptr(), pos.data_ptr<int64_t>(),
                            q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), static_cast<int>(c.heads),
                            static_cast<int>(c.kv_heads), static_cast<int>(c.head_dim()), k_cache.size(2),
                            stream_of(qkv)));
}

torch::Tensor attention_workspace(const llm::Config& c, int64_t capacity, torch::Device device) {
  const int64_t bytes =
      compiled() ? attention_workspace_bytes(static_cast<int>(c.heads), static_cast<int>(c.kv_heads),
                                             static_cast<int>(c.head_dim()), capacity)
                 : 0;
  return torch::zeros({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(device));
}

void attention_aten(const llm::Config& c, const torch::Tensor& q, const torch::Tensor& k_cache,
                    const torch::Tensor& v_cache, const torch::Tensor& pos, torch::Tensor& out) {
  const int64_t H = c.heads, hd = c.head_dim(), cap = k_cache.size(2);
  const torch::Tensor mask = torch::arange(cap, torch::TensorOptions().dtype(torch::kLong).device(q.device()))
                                 .view({1, cap})
                                 .le(pos.view({1, 1}));
  const torch::Tensor a = torch::scaled_dot_product_attention(q.view({1, H, 1, hd}), k_cache, v_cache, mask,
                                                              0.0, false, std::nullopt, /*enable_gqa=*/true);
  out.view({-1}).copy_(a.view({-1}));
}

void attention(const llm::Config& c, const torch::Tensor& q, const torch::Tensor& k_cache,
               const torch::Tensor& v_cache, const torch::Tensor& pos, torch::Tensor& out,
               torch::Tensor& workspace) {
  if (!kernels_unavailable(q.device(), q.scalar_type()).empty() || k_cache.size(0) != 1 ||
      workspace.numel() == 0)
    return attention_aten(c, q, k_cache, v_cache, pos, out);
  check(llmk::attention(q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), pos.data_ptr<int64_t>(),
                        out.data_ptr(), static_cast<int>(c.heads), static_cast<int>(c.kv_heads),
                        static_cast<int>(c.head_dim()), k_cache.size(2),
                        static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim()))),
                        workspace.data_ptr(), stream_of(q)));
}

const char* step_name(Step s) {
  switch (s) {
    case Step::Gemv: return "gemv";
    case Step::Fused: return "fused";
    case Step::Attention: return "attention";
    case Step::Overlap: return "overlap";
  }
  return "?";
}

Decoder::Decoder(const llm::Model& model, llm::KvCache& cache, Step step)
    : model_(model), cache_(cache), step_(step) {
  if (cache.growing || cache.k.empty() || cache.k[0].size(0) != 1)
    throw std::invalid_argument("llmk::Decoder: needs a preallocated cache of batch 1");
  const llm::Config& c = model.config();
  const auto o = model.options();
  kernels_ = kernels_unavailable(o.device(), o.dtype().toScalarType()).empty();
  const auto lo = torch::TensorOptions().dtype(torch::kLong).device(o.device());
  token_ = torch::zeros({1, 1}, lo);
  pos_ = torch::zeros({1}, lo);
  logits_ = torch::zeros({1, c.vocab}, o);
  x_ = torch::zeros({c.dim}, o);
  qkv_ = torch::zeros({c.qkv_out()}, o);
  q_ = torch::zeros({c.heads * c.head_dim()}, o);
  attn_ = torch::zeros({c.heads * c.head_dim()}, o);
  gu_ = torch::zeros({2 * c.mlp}, o);
  act_ = torch::zeros({c.mlp}, o);
  ws_ = attention_workspace(c, cache.k[0].size(2), o.device());
}

Decoder::~Decoder() = default;

void Decoder::set_token(const torch::Tensor& token) { token_.copy_(token.view_as(token_)); }

void Decoder::set(const torch::Tensor& token, int64_t pos) {
  set_token(token);
  pos_.fill_(pos);
}

void Decoder::run() {
  torch::NoGradGuard no_grad;
  const llm::Config& c = model_.config();
  const double eps = c.eps;
  const bool fused = step_ >= Step::Fused, own_attention = step_ >= Step::Attention;
  const torch::Tensor none;
  GemvConfig gc;
  gc.overlap = step_ >= Step::Overlap;
  torch::Tensor logits = logits_.view({-1});
  if (fused && kernels_)
    check(embed(model_.embedding().data_ptr(), token_.data_ptr<int64_t>(), x_.data_ptr(), c.dim,
                stream_of(x_)));
  else
    x_.copy_(model_.embedding().index_select(0, token_.view({1})).view({-1}));
  const auto& layers = model_.layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    const llm::Layer& L = layers[l];
    if (fused) {
      gemv(L.wqkv, x_, qkv_, L.attn_norm, eps, Epilogue::Store, none, gc);  // RMSNorm in the prologue
      rope_kv_write(c, qkv_, model_.rope_cos(), model_.rope_sin_signed(), pos_, q_, cache_.k[l], cache_.v[l]);
    } else {
      gemv(L.wqkv, at::rms_norm(x_, {c.dim}, L.attn_norm, eps), qkv_, none, eps, Epilogue::Store, none, gc);
      rope_kv_write_aten(c, qkv_, model_.rope_cos(), model_.rope_sin_signed(), pos_, q_, cache_.k[l],
                         cache_.v[l]);
    }
    if (own_attention)
      attention(c, q_, cache_.k[l], cache_.v[l], pos_, attn_, ws_);
    else
      attention_aten(c, q_, cache_.k[l], cache_.v[l], pos_, attn_);
    gemv(L.wo, attn_, x_, none, eps, Epilogue::AddResidual, x_, gc);
    if (fused) {
      gemv(L.w_gate_up, x_, act_, L.mlp_norm, eps, Epilogue::SwiGLU, none, gc);
    } else {
      gemv(L.w_gate_up, at::rms_norm(x_, {c.dim}, L.mlp_norm, eps), gu_, none, eps, Epilogue::Store, none,
           gc);
      torch::mul_out(act_, torch::silu(gu_.narrow(0, 0, c.mlp)), gu_.narrow(0, c.mlp, c.mlp));
    }
    gemv(L.w_down, act_, x_, none, eps, Epilogue::AddResidual, x_, gc);
  }
  if (fused) {
    gemv(model_.lm_head(), x_, logits, model_.final_norm(), eps, Epilogue::Store, none, gc);
  } else {
    gemv(model_.lm_head(), at::rms_norm(x_, {c.dim}, model_.final_norm(), eps), logits, none, eps,
         Epilogue::Store, none, gc);
  }
  if (fused && kernels_) {
    check(argmax_next(logits_.data_ptr(), c.vocab, token_.data_ptr<int64_t>(), pos_.data_ptr<int64_t>(),
                      stream_of(x_)));
  } else {
    token_.copy_(logits_.argmax(-1, /*keepdim=*/true));
    pos_.add_(1);
  }
}

void Decoder::capture() {
#ifdef WORKBOOK_WITH_CUDA
  if (!model_.options().device().is_cuda())
    throw std::runtime_error("llmk::Decoder::capture: needs a CUDA device");
  auto graph = std::make_shared<at::cuda::CUDAGraph>();
  c10::cuda::device_synchronize();
  {
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(side);
    for (int i = 0; i < 3; ++i) {
      pos_.zero_();  // warm-up writes cache row 0 only; a prefill afterwards rewrites it
      run();
    }
    side.synchronize();
    pos_.zero_();
    graph->capture_begin();
    run();
    graph->capture_end();
    side.synchronize();
  }
  graph_ = graph;
#else
  throw std::runtime_error("llmk::Decoder::capture: this build's LibTorch has no CUDA");
#endif
}

void Decoder::replay() {
#ifdef WORKBOOK_WITH_CUDA
  if (!graph_) throw std::logic_error("llmk::Decoder::replay before capture");
  std::static_pointer_cast<at::cuda::CUDAGraph>(graph_)->replay();
#endif
}

}  // namespace llmk
