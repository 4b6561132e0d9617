"""y = x @ W.T + b: a tiled matmul reading W through its strides (no transposed copy), with
the bias added in the epilogue; fp32 accumulation."""
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                   stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * stride_xm + kk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w_t = tl.load(w_ptr + kk[:, None] * stride_wk + rn[None, :] * stride_wn,
                      mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x.to(tl.float32), w_t.to(tl.float32), input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn,
             acc.to(y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernel(x, weight, bias, in_features, out_features):
    rows = x.reshape(-1, in_features)
    M = rows.shape[0]
    y = torch.empty((M, out_features), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (max(triton.cdiv(M, BLOCK_M), 1), max(triton.cdiv(out_features, BLOCK_N), 1))
    _linear_kernel[grid](rows, weight, bias, y, M, out_features, in_features,
                         rows.stride(0), rows.stride(1), weight.stride(0), weight.stride(1),
                         y.stride(0), y.stride(1),
                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return y.reshape(*x.shape[:-1], out_features)
