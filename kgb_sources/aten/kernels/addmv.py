# addmv: beta * self + alpha * (A @ x), A (M, K), x (K,), self broadcastable to (M,) (read
# through its broadcast stride, 0 for a one-element self). As in ATen, beta == 0 means self is
# not read. Each program reduces BLOCK_M rows of A against x in fp32, as mv does, and applies
# the scaling and the addition in fp32 before one rounding to the output dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def _addmv_kernel(self_ptr, a_ptr, x_ptr, y_ptr, M, K, beta, alpha,
                  stride_self, stride_am, stride_ak, stride_x, stride_y,
                  READ_SELF: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
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
    y = alpha * tl.sum(acc, axis=1)
    if READ_SELF:
        s = tl.load(self_ptr + rows * stride_self, mask=row_mask, other=0.0)
        y += beta * s.to(tl.float32)
    tl.store(y_ptr + rows * stride_y, y.to(y_ptr.dtype.element_ty), mask=row_mask)


def kernel(self: torch.Tensor, mat: torch.Tensor, vec: torch.Tensor, beta: float = 1.0,
           alpha: float = 1.0) -> torch.Tensor:
    if mat.dim() != 2 or vec.dim() != 1 or mat.shape[1] != vec.shape[0]:
        raise ValueError(f"addmv needs (M, K) and (K,), got {tuple(mat.shape)} and "
                         f"{tuple(vec.shape)}")
    m, k = mat.shape
    y = torch.empty((m,), dtype=mat.dtype, device=mat.device)
    if m:
        s = self.expand(m)  # a view: a broadcast self gets stride 0
        block_m, block_k = (16, 256) if mat.device.type == "cuda" else (16, 64)
        _addmv_kernel[(triton.cdiv(m, block_m),)](
            s, mat, vec, y, m, k, float(beta), float(alpha), s.stride(0),
            mat.stride(0), mat.stride(1), vec.stride(0), y.stride(0),
            READ_SELF=beta != 0, BLOCK_M=block_m, BLOCK_K=block_k)
    return y
