# op: aten.mm
# In the style of GEMM kernels that want K a multiple of their block: both operands copied
# into zero-filled buffers by slice assignment (``a_pad[:, :k] = a``: torch copies into part
# of a buffer, each kept for the judge with the whole buffer as the launch finds it, neither
# of which is the answer), then a blocked matmul with no masks along K, accumulating in fp32.
import torch
import triton
import triton.language as tl


@triton.jit
def _mm_padded(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a_tile = tl.load(a + rm[:, None] * stride_am + (k0 + rk)[None, :],
                         mask=rm[:, None] < M, other=0.0)
        b_tile = tl.load(b + (k0 + rk)[:, None] * stride_bk + rn[None, :],
                         mask=rn[None, :] < N, other=0.0)
        acc += tl.dot(a_tile.to(tl.float32), b_tile.to(tl.float32), input_precision="ieee")
    tl.store(c + rm[:, None] * stride_cm + rn[None, :], acc.to(c.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernel(a, b):
    m, k = a.shape
    n = b.shape[1]
    padded_k = triton.cdiv(k, 32) * 32
    a_pad = torch.zeros((m, padded_k), dtype=a.dtype, device=a.device)
    a_pad[:, :k] = a
    b_pad = torch.zeros((padded_k, n), dtype=b.dtype, device=b.device)
    b_pad[:k] = b
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
    _mm_padded[grid](a_pad, b_pad, c, m, n, padded_k, a_pad.stride(0), b_pad.stride(0),
                     c.stride(0), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c
