# mv: y = A @ x, A (M, K), x (K,), any strides. A matrix-vector product has no reuse for tl.dot
# to exploit, so each program reduces BLOCK_M rows: it walks K in BLOCK_K steps, multiplying a
# (BLOCK_M, BLOCK_K) tile of A by the matching slice of x, and keeps an fp32 (BLOCK_M, BLOCK_K)
# partial sum that is reduced along K once at the end.
import torch
import triton
import triton.language as tl


@triton.jit
def _mv_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am, stride_ak, stride_x, stride_y,
               BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    row_start = rows.to(tl.int64) * stride_am
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        col_mask = cols < K
        a = tl.load(a_ptr + row_start[:, None] + cols[None, :] * stride_ak,
                    mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        x = tl.load(x_ptr + cols * stride_x, mask=col_mask, other=0.0)
        acc += a.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows * stride_y, y.to(y_ptr.dtype.element_ty), mask=row_mask)


def kernel(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    if a.dim() != 2 or x.dim() != 1 or a.shape[1] != x.shape[0]:
        raise ValueError(f"mv needs (M, K) and (K,), got {tuple(a.shape)} and {tuple(x.shape)}")
    m, k = a.shape
    y = torch.empty((m,), dtype=a.dtype, device=a.device)
    if m:
        block_m, block_k = (16, 256) if a.device.type == "cuda" else (16, 64)
        _mv_kernel[(triton.cdiv(m, block_m),)](
            a, x, y, m, k, a.stride(0), a.stride(1), x.stride(0), y.stride(0),
            BLOCK_M=block_m, BLOCK_K=block_k)
    return y
