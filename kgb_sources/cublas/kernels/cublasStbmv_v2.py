# cublasStbmv_v2: x = op(A) * x for a triangular n x n band matrix A with k super- (uplo U) or
# sub-diagonals (uplo L) in LAPACK band storage: U holds A(i, j), i <= j <= i + k, at band row
# k + i - j of column j; L holds A(i, j), j <= i <= j + k, at band row i - j of column j
# (element (r, j) of the band is A[r + j * lda], lda >= k + 1). diag U: the diagonal is taken as
# ones and never read. Row i of op(A) is, at band row k - t (U) or t (L), t = 0..k: for trans N a
# run along a diagonal (columns i +- t), for trans T a run down column i. x is updated in place,
# so the product goes to a scratch vector first and is copied back by a second launch: a
# program writing its rows of x must not race the others still reading them.
import torch
import triton
import triton.language as tl


@triton.jit
def _tbmv_kernel(a_ptr, x_ptr, out_ptr, n, k, lda, incx,
                 UPPER: tl.constexpr, TRANS: tl.constexpr, UNIT: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for t0 in range(0, k + 1, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        t_ok = t <= k
        if UNIT:
            t_ok = t_ok & (t >= 1)
        if UPPER:
            band_row = k - t
            sign = 1
        else:
            band_row = t
            sign = -1
        if TRANS:
            j = rows[:, None] - sign * t[None, :]
            column = rows.to(tl.int64)[:, None]
        else:
            j = rows[:, None] + sign * t[None, :]
            column = j.to(tl.int64)
        ok = row_ok[:, None] & t_ok[None, :] & (j >= 0) & (j < n)
        a = tl.load(a_ptr + band_row[None, :] + column * lda, mask=ok, other=0.0)
        xv = tl.load(x_ptr + j * incx, mask=ok, other=0.0)
        acc += tl.sum(a * xv, axis=1)
    if UNIT:
        acc += tl.load(x_ptr + rows * incx, mask=row_ok, other=0.0)
    tl.store(out_ptr + rows, acc, mask=row_ok)


@triton.jit
def _scatter_kernel(src_ptr, x_ptr, n, incx, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    tl.store(x_ptr + offs * incx, tl.load(src_ptr + offs, mask=ok), mask=ok)


def kernel(uplo: str, trans: str, diag: str, n: int, k: int, A: torch.Tensor, lda: int,
           x: torch.Tensor, incx: int) -> None:
    if n <= 0:
        return None
    out = torch.empty(n, dtype=x.dtype, device=x.device)
    block_m = 64
    block_t = min(32, triton.next_power_of_2(k + 1))
    _tbmv_kernel[(triton.cdiv(n, block_m),)](
        A, x, out, n, k, lda, incx, UPPER=uplo == "U", TRANS=trans != "N", UNIT=diag == "U",
        BLOCK_M=block_m, BLOCK_T=block_t)
    _scatter_kernel[(triton.cdiv(n, 1024),)](out, x, n, incx, BLOCK=1024)
    return None
