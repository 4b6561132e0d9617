# op: aten.scaled_dot_product_attention
# expect: wrong_output
# Rounds q, k and v to fp16 (copies, which the recorder allows for staging) and then runs an
# honest fp32 flash-attention kernel: a tensor-core shortcut's accuracy. Within the flat atol of
# 1e-4 x Lk it passed; attention's fp32 rounding bound (kgb_core/evaluation/attention_bound.py)
# rejects it.
#
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, H, Lq, Lk, DV, scale,
                      sqb, sqh, sqm, sqd, skb, skh, skn, skd, svb, svh, svn, svd,
                      sob, soh, som, sod,
                      IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    q = tl.load(q_ptr + b * sqb + h * sqh + offs_m[:, None] * sqm + offs_d[None, :] * sqd,
                mask=offs_m[:, None] < Lq, other=0.0)
    k_base = k_ptr + b * skb + h * skh
    v_base = v_ptr + b * svb + h * svh
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_DV), dtype=tl.float32)
    if IS_CAUSAL:
        # Keys past the block's last query are masked for every row: skip them.
        hi = tl.minimum(Lk, (start_m + 1) * BLOCK_M)
    else:
        hi = Lk
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_t = tl.load(k_base + offs_n[None, :] * skn + offs_d[:, None] * skd,
                      mask=offs_n[None, :] < Lk, other=0.0)
        # "ieee": torch computes float32 attention exactly, and TF32 misses its tolerance.
        s = tl.dot(q, k_t, input_precision="ieee") * scale
        valid = offs_n[None, :] < Lk
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        # A row with every key masked so far keeps m = -inf; subtract 0 there, not -inf.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + offs_n[:, None] * svn + offs_dv[None, :] * svd,
                    mask=offs_n[:, None] < Lk, other=0.0)
        # p in v's dtype: fp16/bf16 tensor-core products with fp32 accumulation, as flash
        # attention does; for float32 an exact fp32 product.
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    # v's padded columns hold zeros: only the first DV columns are the output.
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * som + offs_dv[None, :] * sod,
             out.to(o_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < Lq) & (offs_dv[None, :] < DV))


def _aligned_heads(x: torch.Tensor, block: int) -> torch.Tensor:
    """x itself when its head dim is `block` and every stride a multiple of 16 elements, else a
    contiguous copy zero-padded to `block` columns.

    Why: on an H200 (Triton 3.6) the kernel gave wrong output (891 of 912 elements) for d=40,
    dv=24, Lk=70 in fp16, while the interpreter with the same block sizes was right. That case
    alone combined k/v tiles masked in the head dim, with 40- and 24-element row strides that
    Triton cannot vectorize, and a key loop of more than one BLOCK_N feeding wgmma; the shapes
    that passed there had one key block, or aligned unmasked head dims (d=64, 128). Which of
    those Triton mishandled is not pinned down; with this padding all 24 trials pass on the
    H200. Padding puts every shape on the aligned, unmasked path; flash-attention's own wrapper
    (flash_attn_interface.py) likewise pads head dims to multiples of 8. The copy costs
    O(L * d) beside the kernel's O(Lq * Lk * d), and aligned power-of-two head dims skip it.
    """
    aligned = (x.shape[-1] == block and x.stride(-1) == 1 and x.data_ptr() % 16 == 0
               and all(stride % 16 == 0 for stride in x.stride()[:-1]))
    if aligned:
        return x
    padded = x.new_zeros((*x.shape[:-1], block))
    padded[..., :x.shape[-1]] = x
    return padded


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool = False,
           scale: float | None = None) -> torch.Tensor:
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("scaled_dot_product_attention here takes (B, H, L, D) q, k and v")
    batch, heads, lq, d = q.shape
    lk, dv = k.shape[2], v.shape[3]
    out = torch.empty((batch, heads, lq, dv), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    softmax_scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    block_d = max(16, triton.next_power_of_2(d))
    block_dv = max(16, triton.next_power_of_2(dv))
    q, k, v = _aligned_heads(q, block_d), _aligned_heads(k, block_d), _aligned_heads(v, block_dv)
    if q.device.type == "cuda":
        # float32 tiles take twice the shared memory of fp16 ones: smaller blocks keep the
        # pipelined k/v buffers within an SM's shared memory.
        big = block_d <= 128 and q.dtype != torch.float32
        block_m, block_n, warps = (128, 64, 8) if big else (64, 32, 4)
    else:
        block_m, block_n, warps = 32, 32, 4
    grid = (triton.cdiv(lq, block_m), batch * heads)
    _attention_kernel[grid](
        q, k, v, out, heads, lq, lk, dv, softmax_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        IS_CAUSAL=bool(is_causal), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d,
        BLOCK_DV=block_dv, num_warps=warps)
    return out


def kernel(q, k, v, is_causal=False, scale=None):
    if q.dtype == torch.float32:
        q, k, v = (t.to(torch.float16).to(torch.float32) for t in (q, k, v))
    return _attention(q, k, v, is_causal, scale)
