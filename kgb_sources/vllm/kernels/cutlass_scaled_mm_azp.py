# vLLM cutlass_scaled_mm_azp(out, a, b, scale_a, scale_b, azp_adj, azp, bias): the int8 GEMM
# for asymmetrically quantised activations. acc = a @ b in int32; the zero-point correction
# is acc - azp_adj[n] (per tensor, azp None) or acc - azp[m] * azp_adj[n] (per token), in
# int32; out = scale_a[m] * (scale_b[n] * float(c)) (+ bias[n]), rounded to out's dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_mm_azp_kernel(out_ptr, a_ptr, b_ptr, sa_ptr, sb_ptr, adj_ptr, azp_ptr, bias_ptr,
                          M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                          PER_TOKEN: tl.constexpr, PER_CHANNEL: tl.constexpr,
                          PER_TOKEN_AZP: tl.constexpr, HAS_BIAS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :].to(tl.int64) * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
    adj = tl.load(adj_ptr + rn, mask=rn < N, other=0)
    if PER_TOKEN_AZP:
        azp = tl.load(azp_ptr + rm, mask=rm < M, other=0)
        acc -= azp[:, None] * adj[None, :]
    else:
        acc -= adj[None, :]
    if PER_TOKEN:
        sa = tl.load(sa_ptr + rm, mask=rm < M, other=0.0)
    else:
        sa = tl.load(sa_ptr + rm * 0)
    if PER_CHANNEL:
        sb = tl.load(sb_ptr + rn, mask=rn < N, other=0.0)
    else:
        sb = tl.load(sb_ptr + rn * 0)
    d = sa[:, None] * (sb[None, :] * acc.to(tl.float32))
    if HAS_BIAS:
        d += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
             d.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernel(out, a, b, scale_a, scale_b, azp_adj, azp, bias):  # noqa: ANN001, ANN201
    m, k = a.shape
    n = b.shape[1]
    block = 64 if a.is_cuda else 32
    grid = (triton.cdiv(m, block), triton.cdiv(n, block))
    _scaled_mm_azp_kernel[grid](
        out, a, b, scale_a, scale_b, azp_adj, azp if azp is not None else azp_adj,
        bias if bias is not None else out, m, n, k, a.stride(0), a.stride(1), b.stride(0),
        b.stride(1), PER_TOKEN=scale_a.numel() > 1, PER_CHANNEL=scale_b.numel() > 1,
        PER_TOKEN_AZP=azp is not None, HAS_BIAS=bias is not None,
        BLOCK_M=block, BLOCK_N=block, BLOCK_K=block)
    return None
