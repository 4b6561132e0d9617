# cublasSsyr_v2: A = alpha * x * x^T + A for a symmetric n x n A of which only the uplo triangle
# is read and written (column-major, A(i, j) = A[i + j * lda]); the other triangle and the
# padding rows stay as they were. One program updates one BLOCK x BLOCK tile; tiles wholly
# outside the triangle store nothing.
import torch
import triton
import triton.language as tl


@triton.jit
def _syr_kernel(a_ptr, x_ptr, n, lda, incx, alpha, UPPER: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    row_ok = rows < n
    col_ok = cols < n
    if UPPER:
        tri = rows[:, None] <= cols[None, :]
    else:
        tri = rows[:, None] >= cols[None, :]
    mask = row_ok[:, None] & col_ok[None, :] & tri
    ptrs = a_ptr + rows.to(tl.int64)[:, None] + cols.to(tl.int64)[None, :] * lda
    xr = tl.load(x_ptr + rows * incx, mask=row_ok, other=0.0)
    xc = tl.load(x_ptr + cols * incx, mask=col_ok, other=0.0)
    a = tl.load(ptrs, mask=mask, other=0.0)
    a += alpha * (xr[:, None] * xc[None, :])
    tl.store(ptrs, a, mask=mask)


def kernel(uplo: str, n: int, alpha: float, x: torch.Tensor, incx: int, A: torch.Tensor,
           lda: int) -> None:
    if n <= 0:
        return None
    block = 64 if A.device.type == "cuda" else 32
    grid = (triton.cdiv(n, block), triton.cdiv(n, block))
    _syr_kernel[grid](A, x, n, lda, incx, alpha, UPPER=uplo == "U", BLOCK=block)
    return None
