# vLLM fused_qk_norm_rope(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps, q_weight,
# k_weight, cos_sin_cache, is_neox, position_ids), in place on qkv [tokens, heads * head_dim]
# (q heads, k heads, v heads). Per q/k head, in fp32: y = x * (rsqrt(mean(x^2) + eps) * w),
# then RoPE over the first rot_dim entries (NeoX pairs (i, i + rot/2), GPT-J pairs (2i, 2i+1)),
# one rounding to the dtype at the end; v heads untouched. One program per (token, q/k head);
# each element's rotation partner is loaded a second time instead of shuffled.
import torch
import triton
import triton.language as tl


@triton.jit
def _qk_norm_rope_kernel(qkv_ptr, qw_ptr, kw_ptr, cache_ptr, pos_ptr, num_heads_q,
                         num_heads_qk, total_heads, rot_dim, eps, IS_NEOX: tl.constexpr,
                         HEAD_DIM: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    base = qkv_ptr + (token * total_heads + head) * HEAD_DIM
    d = tl.arange(0, HEAD_DIM)
    half = rot_dim // 2
    if IS_NEOX:
        partner = tl.where(d < half, d + half, d - half)
        sign = tl.where(d < half, -1.0, 1.0)
        freq = tl.where(d < half, d, d - half)
    else:
        partner = d ^ 1
        sign = tl.where((d & 1) == 0, -1.0, 1.0)
        freq = d // 2
    rotated = d < rot_dim
    partner = tl.where(rotated, partner, d)
    x = tl.load(base + d).to(tl.float32)
    xp = tl.load(base + partner).to(tl.float32)
    if head < num_heads_q:
        w = tl.load(qw_ptr + d).to(tl.float32)
        wp = tl.load(qw_ptr + partner).to(tl.float32)
    else:
        w = tl.load(kw_ptr + d).to(tl.float32)
        wp = tl.load(kw_ptr + partner).to(tl.float32)
    rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / HEAD_DIM + eps)
    y = x * (rms * w)
    yp = xp * (rms * wp)
    pos = tl.load(pos_ptr + token).to(tl.int64)
    cos = tl.load(cache_ptr + pos * rot_dim + freq, mask=rotated, other=1.0).to(tl.float32)
    sin = tl.load(cache_ptr + pos * rot_dim + half + freq, mask=rotated, other=0.0).to(tl.float32)
    out = tl.where(rotated, y * cos + sign * yp * sin, y)
    tl.store(base + d, out.to(qkv_ptr.dtype.element_ty))


def kernel(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps, q_weight, k_weight,
           cos_sin_cache, is_neox, position_ids):  # noqa: ANN001, ANN201
    tokens = qkv.shape[0]
    if tokens == 0:
        return None
    _qk_norm_rope_kernel[(tokens, num_heads_q + num_heads_k)](
        qkv, q_weight, k_weight, cos_sin_cache.contiguous(), position_ids, num_heads_q,
        num_heads_q + num_heads_k, num_heads_q + num_heads_k + num_heads_v,
        cos_sin_cache.shape[-1], float(eps), IS_NEOX=bool(is_neox), HEAD_DIM=int(head_dim))
    return None
