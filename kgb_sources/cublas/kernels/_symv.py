# __NAME__: y = alpha * A * x + beta * y for a symmetric n x n A (complex symmetric, not
# Hermitian, in the C variant) of which only the uplo triangle is read. A is column-major,
# A(i, j) = A[i + j * lda]; x and y are strided by incx and incy; complex buffers interleave
# real and imaginary parts. One program computes BLOCK rows of y: it walks the column blocks
# whose tiles lie in the stored triangle directly (S(r, c) = A(r, c)) and those on the other
# side through the transposed tile (S(r, c) = A(c, r), read down column r so loads stay
# contiguous), so each stored element is read once per row block it serves.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __IS_COMPLEX__


@triton.jit
def _symv_kernel(a_ptr, x_ptr, y_ptr, n, lda, incx, incy, alpha_re, alpha_im, beta_re, beta_im,
                 UPPER: tl.constexpr, COMPLEX: tl.constexpr, BETA_ZERO: tl.constexpr,
                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nb = tl.cdiv(n, BLOCK)
    offs = tl.arange(0, BLOCK)
    rows = pid * BLOCK + offs
    row_ok = rows < n
    rows64 = rows.to(tl.int64)
    zero = tl.zeros((BLOCK,), dtype=a_ptr.dtype.element_ty)
    direct_re = zero
    direct_im = zero
    across_re = zero
    across_im = zero
    # Stored triangle on this row block's side: U keeps c >= r, L keeps c <= r.
    if UPPER:
        direct_lo = pid
        direct_hi = nb
        across_lo = 0
        across_hi = pid + 1
    else:
        direct_lo = 0
        direct_hi = pid + 1
        across_lo = pid
        across_hi = nb
    for cb in range(direct_lo, direct_hi):
        cols = cb * BLOCK + offs
        col_ok = cols < n
        if UPPER:
            tri = rows[:, None] <= cols[None, :]
        else:
            tri = rows[:, None] >= cols[None, :]
        mask = row_ok[:, None] & col_ok[None, :] & tri
        idx = rows64[:, None] + cols.to(tl.int64)[None, :] * lda
        if COMPLEX:
            ar = tl.load(a_ptr + 2 * idx, mask=mask, other=0.0)
            ai = tl.load(a_ptr + 2 * idx + 1, mask=mask, other=0.0)
            xr = tl.load(x_ptr + 2 * cols * incx, mask=col_ok, other=0.0)
            xi = tl.load(x_ptr + 2 * cols * incx + 1, mask=col_ok, other=0.0)
            direct_re += tl.sum(ar * xr[None, :] - ai * xi[None, :], axis=1)
            direct_im += tl.sum(ar * xi[None, :] + ai * xr[None, :], axis=1)
        else:
            a = tl.load(a_ptr + idx, mask=mask, other=0.0)
            xv = tl.load(x_ptr + cols * incx, mask=col_ok, other=0.0)
            direct_re += tl.sum(a * xv[None, :], axis=1)
    for cb in range(across_lo, across_hi):
        # Tile [c, r] = A(c, r), the stored element mirrored to S(r, c); strictly off the
        # diagonal, which the direct walk already counted.
        cols = cb * BLOCK + offs
        col_ok = cols < n
        if UPPER:
            tri = cols[:, None] < rows[None, :]
        else:
            tri = cols[:, None] > rows[None, :]
        mask = col_ok[:, None] & row_ok[None, :] & tri
        idx = cols.to(tl.int64)[:, None] + rows64[None, :] * lda
        if COMPLEX:
            ar = tl.load(a_ptr + 2 * idx, mask=mask, other=0.0)
            # The mirrored element, not conjugated: A is symmetric, not Hermitian.
            ai = tl.load(a_ptr + 2 * idx + 1, mask=mask, other=0.0)
            xr = tl.load(x_ptr + 2 * cols * incx, mask=col_ok, other=0.0)
            xi = tl.load(x_ptr + 2 * cols * incx + 1, mask=col_ok, other=0.0)
            across_re += tl.sum(ar * xr[:, None] - ai * xi[:, None], axis=0)
            across_im += tl.sum(ar * xi[:, None] + ai * xr[:, None], axis=0)
        else:
            a = tl.load(a_ptr + idx, mask=mask, other=0.0)
            xv = tl.load(x_ptr + cols * incx, mask=col_ok, other=0.0)
            across_re += tl.sum(a * xv[:, None], axis=0)
    t_re = direct_re + across_re
    t_im = direct_im + across_im
    if COMPLEX:
        out_re = alpha_re * t_re - alpha_im * t_im
        out_im = alpha_re * t_im + alpha_im * t_re
        if not BETA_ZERO:
            # beta == 0: y is not read (cuBLAS: it need not be set on input).
            yr = tl.load(y_ptr + 2 * rows * incy, mask=row_ok, other=0.0)
            yi = tl.load(y_ptr + 2 * rows * incy + 1, mask=row_ok, other=0.0)
            out_re += beta_re * yr - beta_im * yi
            out_im += beta_re * yi + beta_im * yr
        tl.store(y_ptr + 2 * rows * incy, out_re, mask=row_ok)
        tl.store(y_ptr + 2 * rows * incy + 1, out_im, mask=row_ok)
    else:
        out = alpha_re * t_re
        if not BETA_ZERO:
            out += beta_re * tl.load(y_ptr + rows * incy, mask=row_ok, other=0.0)
        tl.store(y_ptr + rows * incy, out, mask=row_ok)


def kernel(uplo: str, n: int, alpha, A: torch.Tensor, lda: int, x: torch.Tensor, incx: int,
           beta, y: torch.Tensor, incy: int) -> None:
    if n <= 0:
        return None
    alpha, beta = complex(alpha), complex(beta)
    block = 32
    _symv_kernel[(triton.cdiv(n, block),)](
        A, x, y, n, lda, incx, incy, alpha.real, alpha.imag, beta.real, beta.imag,
        UPPER=uplo == "U", COMPLEX=IS_COMPLEX, BETA_ZERO=beta == 0, BLOCK=block)
    return None
