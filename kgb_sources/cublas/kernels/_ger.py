# __NAME__: the rank-1 update A = alpha * x * y^T + A (geru: unconjugated; gerc: alpha * x *
# y^H, y conjugated) of an m x n column-major A (A(i, j) = A[i + j * lda]), in place. x has m
# elements strided by incx, y has n strided by incy. Complex buffers interleave real and
# imaginary parts, so offsets are in reals (doubled on the host). One program updates one
# BLOCK_M x BLOCK_N tile; the padding rows m..lda-1 of each column are masked out of every
# load and store, so they keep their values.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __COMPLEX__
CONJUGATE_Y = __CONJ__


@triton.jit
def _ger_kernel(a_ptr, x_ptr, y_ptr, M, N, row_step, lda, incx, incy, alpha_r,
                alpha_i, COMPLEX: tl.constexpr, CONJ_Y: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    a_ptrs = a_ptr + rows[:, None] * row_step + cols[None, :] * lda
    x_ptrs = x_ptr + rows * incx
    y_ptrs = y_ptr + cols * incy
    xr = tl.load(x_ptrs, mask=row_ok, other=0.0)
    yr = tl.load(y_ptrs, mask=col_ok, other=0.0)
    ar = tl.load(a_ptrs, mask=mask, other=0.0)
    if COMPLEX:
        xi = tl.load(x_ptrs + 1, mask=row_ok, other=0.0)
        yi = tl.load(y_ptrs + 1, mask=col_ok, other=0.0)
        if CONJ_Y:
            yi = -yi
        ai = tl.load(a_ptrs + 1, mask=mask, other=0.0)
        # alpha x_i first (one complex multiply per row), then times y_j.
        sr = alpha_r * xr - alpha_i * xi
        si = alpha_r * xi + alpha_i * xr
        ar += sr[:, None] * yr[None, :] - si[:, None] * yi[None, :]
        ai += sr[:, None] * yi[None, :] + si[:, None] * yr[None, :]
        tl.store(a_ptrs + 1, ai, mask=mask)
    else:
        ar += (alpha_r * xr)[:, None] * yr[None, :]
    tl.store(a_ptrs, ar, mask=mask)


def kernel(m: int, n: int, alpha, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int,
           A: torch.Tensor, lda: int) -> None:
    if m <= 0 or n <= 0:
        return None
    scale = 2 if IS_COMPLEX else 1
    alpha = complex(alpha)
    if A.device.type == "cuda":
        # A is read and written once: 64 rows (256 B of fp32) per column keep accesses whole
        # cache lines; complex elements are twice as wide.
        block_m, block_n = (32, 64) if IS_COMPLEX or A.dtype == torch.float64 else (64, 64)
    else:
        block_m, block_n = 32, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    # Offsets in reals: a complex element is two of them.
    _ger_kernel[grid](A, x, y, m, n, scale, lda * scale, incx * scale, incy * scale,
                      alpha.real, alpha.imag, COMPLEX=IS_COMPLEX, CONJ_Y=CONJUGATE_Y,
                      BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4)
    return None
