# cublasSgbmv_v2: y = alpha * op(A) * x + beta * y for an m x n band matrix A with kl sub- and ku
# super-diagonals in LAPACK band storage: A(i, j), max(0, j - ku) <= i <= min(m - 1, j + kl),
# sits at band row ku + i - j of column j (element (r, j) of the band is A[r + j * lda],
# lda >= kl + ku + 1). trans N: x has n elements, y m, and row i of A is a run along a diagonal of
# the band (columns j = i - kl + o, band row kl + ku - o); trans T/C (real: the same): x has m
# elements, y n, and row j of A^T is column j of the band, read straight down (i = j - ku + r).
import torch
import triton
import triton.language as tl


@triton.jit
def _gbmv_kernel(a_ptr, x_ptr, y_ptr, out_len, in_len, kl, ku, lda, incx, incy, alpha, beta,
                 TRANS: tl.constexpr, BETA_ZERO: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < out_len
    width = kl + ku + 1
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for o0 in range(0, width, BLOCK_T):
        o = o0 + tl.arange(0, BLOCK_T)
        if TRANS:
            j = rows[:, None] - ku + o[None, :]
            addr = o[None, :] + rows.to(tl.int64)[:, None] * lda
        else:
            j = rows[:, None] - kl + o[None, :]
            addr = (kl + ku - o)[None, :] + j.to(tl.int64) * lda
        ok = row_ok[:, None] & (o < width)[None, :] & (j >= 0) & (j < in_len)
        a = tl.load(a_ptr + addr, mask=ok, other=0.0)
        xv = tl.load(x_ptr + j * incx, mask=ok, other=0.0)
        acc += tl.sum(a * xv, axis=1)
    out = alpha * acc
    if not BETA_ZERO:
        # beta == 0: y is not read (cuBLAS: it need not be set on input).
        out += beta * tl.load(y_ptr + rows * incy, mask=row_ok, other=0.0)
    tl.store(y_ptr + rows * incy, out, mask=row_ok)


def kernel(trans: str, m: int, n: int, kl: int, ku: int, alpha: float, A: torch.Tensor,
           lda: int, x: torch.Tensor, incx: int, beta: float, y: torch.Tensor,
           incy: int) -> None:
    if m <= 0 or n <= 0:
        return None
    transposed = trans != "N"
    out_len, in_len = (n, m) if transposed else (m, n)
    block_m = 64
    block_t = min(32, triton.next_power_of_2(kl + ku + 1))
    _gbmv_kernel[(triton.cdiv(out_len, block_m),)](
        A, x, y, out_len, in_len, kl, ku, lda, incx, incy, alpha, beta, TRANS=transposed,
        BETA_ZERO=beta == 0, BLOCK_M=block_m, BLOCK_T=block_t)
    return None
