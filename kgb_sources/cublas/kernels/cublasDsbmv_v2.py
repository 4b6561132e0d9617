# cublasDsbmv_v2: y = alpha * A * x + beta * y for a symmetric n x n band matrix A with k
# super- (and sub-) diagonals, given by its uplo triangle in LAPACK band storage: uplo U holds
# A(i, j), i <= j <= i + k, at band row k + i - j of column j; uplo L holds A(i, j),
# j <= i <= j + k, at band row i - j of column j (element (r, j) of the band is A[r + j * lda],
# lda >= k + 1). Row i of S then sums two runs of the band, both at band row k - t (U) or t (L):
# down column i itself (t = 0..k, x[i -+ t]) and along a diagonal through columns i +- t
# (t = 1..k, x[i +- t]). One program computes BLOCK_M rows, t in chunks of BLOCK_T.
import torch
import triton
import triton.language as tl


@triton.jit
def _sbmv_kernel(a_ptr, x_ptr, y_ptr, n, k, lda, incx, incy, alpha, beta,
                 UPPER: tl.constexpr, BETA_ZERO: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n
    acc = tl.zeros((BLOCK_M,), dtype=a_ptr.dtype.element_ty)
    for t0 in range(0, k + 1, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        t_ok = t <= k
        if UPPER:
            band_row = k - t
            sign = 1
        else:
            band_row = t
            sign = -1
        # Down column i: the stored elements whose mirror lies in row i.
        j = rows[:, None] - sign * t[None, :]
        ok = row_ok[:, None] & t_ok[None, :] & (j >= 0) & (j < n)
        a = tl.load(a_ptr + band_row[None, :] + rows.to(tl.int64)[:, None] * lda, mask=ok,
                    other=0.0)
        xv = tl.load(x_ptr + j * incx, mask=ok, other=0.0)
        acc += tl.sum(a * xv, axis=1)
        # Along the diagonal: row i's own stored elements, the diagonal excluded (counted above).
        j = rows[:, None] + sign * t[None, :]
        ok = row_ok[:, None] & t_ok[None, :] & (t[None, :] >= 1) & (j >= 0) & (j < n)
        a = tl.load(a_ptr + band_row[None, :] + j.to(tl.int64) * lda, mask=ok, other=0.0)
        xv = tl.load(x_ptr + j * incx, mask=ok, other=0.0)
        acc += tl.sum(a * xv, axis=1)
    out = alpha * acc
    if not BETA_ZERO:
        # beta == 0: y is not read (cuBLAS: it need not be set on input).
        out += beta * tl.load(y_ptr + rows * incy, mask=row_ok, other=0.0)
    tl.store(y_ptr + rows * incy, out, mask=row_ok)


def kernel(uplo: str, n: int, k: int, alpha: float, A: torch.Tensor, lda: int, x: torch.Tensor,
           incx: int, beta: float, y: torch.Tensor, incy: int) -> None:
    if n <= 0:
        return None
    block_m = 64
    block_t = min(32, triton.next_power_of_2(k + 1))
    _sbmv_kernel[(triton.cdiv(n, block_m),)](
        A, x, y, n, k, lda, incx, incy, alpha, beta, UPPER=uplo == "U", BETA_ZERO=beta == 0,
        BLOCK_M=block_m, BLOCK_T=block_t)
    return None
