# __NAME__: y = alpha * op(A) * x + beta * y for an m x n column-major A (A(i, j) =
# A[i + j * lda]), one batch of (A, x, y) per program column: a single gemv, a strided batch
# (matrix b starts at element b * strideA, likewise x and y) or a pointer-array batch (lists
# of separate buffers, as cuBLAS's arrays of device pointers). op(A) = A (trans "N": y has m
# elements, x has n), A^T ("T") or A^H ("C", conjugated): the two transposes only swap the
# strides along the output and the reduction. Complex buffers interleave real and imaginary
# parts, so offsets are in reals (doubled on the host). One program computes BLOCK_O outputs,
# accumulating BLOCK_O x BLOCK_R products in a float32 (float64 for D/Z) tile and reducing
# once at the end: no tl.dot, so fp64 compiles on GPUs too. When beta == 0, y is not read
# (cuBLAS: it need not be set), so NaN in it cannot reach the output; elements between the
# strided ones, and the gaps between batches, are masked out of every store.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __COMPLEX__


@triton.jit
def _gemv_kernel(a_ptr, x_ptr, y_ptr, a_array, x_array, y_array, OUT, RED,
                 stride_ao, stride_ar, incx, incy,
                 batch_stride_a, batch_stride_x, batch_stride_y,
                 alpha_r, alpha_i, beta_r, beta_i,
                 COMPLEX: tl.constexpr, CONJ: tl.constexpr, BETA_ZERO: tl.constexpr,
                 POINTER_ARRAYS: tl.constexpr, BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    if POINTER_ARRAYS:
        # Batched (not strided): each batch's buffers are wherever its pointers say.
        a_base = tl.load(a_array + batch).to(a_ptr.dtype)
        x_base = tl.load(x_array + batch).to(x_ptr.dtype)
        y_base = tl.load(y_array + batch).to(y_ptr.dtype)
    else:
        a_base = a_ptr + batch * batch_stride_a
        x_base = x_ptr + batch * batch_stride_x
        y_base = y_ptr + batch * batch_stride_y

    # 64-bit offsets: a 14336 x 4096 complex A already spans 2^27 reals, and the _64
    # routines may address more than 2^31.
    offs_o = (pid * BLOCK_O + tl.arange(0, BLOCK_O)).to(tl.int64)
    offs_r = tl.arange(0, BLOCK_R).to(tl.int64)
    o_ok = offs_o < OUT
    acc_r = tl.zeros((BLOCK_O, BLOCK_R), dtype=y_ptr.dtype.element_ty)
    acc_i = tl.zeros((BLOCK_O, BLOCK_R), dtype=y_ptr.dtype.element_ty)
    for r0 in range(0, RED, BLOCK_R):
        red = r0 + offs_r
        r_ok = red < RED
        mask = o_ok[:, None] & r_ok[None, :]
        a_ptrs = a_base + offs_o[:, None] * stride_ao + red[None, :] * stride_ar
        x_ptrs = x_base + red * incx
        ar = tl.load(a_ptrs, mask=mask, other=0.0)
        xr = tl.load(x_ptrs, mask=r_ok, other=0.0)
        if COMPLEX:
            ai = tl.load(a_ptrs + 1, mask=mask, other=0.0)
            xi = tl.load(x_ptrs + 1, mask=r_ok, other=0.0)
            if CONJ:
                ai = -ai
            # (ar + i ai)(xr + i xi) = (ar xr - ai xi) + i (ar xi + ai xr)
            acc_r += ar * xr[None, :] - ai * xi[None, :]
            acc_i += ar * xi[None, :] + ai * xr[None, :]
        else:
            acc_r += ar * xr[None, :]
    t_r = tl.sum(acc_r, axis=1)
    y_ptrs = y_base + offs_o * incy
    if COMPLEX:
        t_i = tl.sum(acc_i, axis=1)
        out_r = alpha_r * t_r - alpha_i * t_i
        out_i = alpha_r * t_i + alpha_i * t_r
        if not BETA_ZERO:
            yr = tl.load(y_ptrs, mask=o_ok, other=0.0)
            yi = tl.load(y_ptrs + 1, mask=o_ok, other=0.0)
            out_r += beta_r * yr - beta_i * yi
            out_i += beta_r * yi + beta_i * yr
        tl.store(y_ptrs, out_r, mask=o_ok)
        tl.store(y_ptrs + 1, out_i, mask=o_ok)
    else:
        out = alpha_r * t_r
        if not BETA_ZERO:
            out += beta_r * tl.load(y_ptrs, mask=o_ok, other=0.0)
        tl.store(y_ptrs, out, mask=o_ok)


def _blocks(trans: str, out_len: int, dtype: torch.dtype, device_type: str) -> tuple[int, int]:
    """(BLOCK_O, BLOCK_R). GEMV is bound by reading A once, so a tile should cover a whole
    cache line along A's contiguous axis (rows of A: the outputs for "N", the reduction for
    "T"/"C") and there should be enough programs for every SM; complex and fp64 tiles hold
    twice the bytes per element, so they get half the elements."""
    if device_type != "cuda":
        return 16, 32
    wide = 2 if (IS_COMPLEX or dtype == torch.float64) else 1
    if trans == "N":
        return (32 if out_len >= 8192 else 16), 128 // wide
    return (16 if out_len >= 4096 else 8), 256 // wide


def _launch(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, *, batch=1, stride_a=0,
            stride_x=0, stride_y=0, arrays=None):
    if trans not in ("N", "T", "C"):
        raise ValueError(f"trans must be N, T or C, not {trans!r}")
    # BLAS's quick return: nothing is done (y not even scaled) when m or n is 0.
    if m <= 0 or n <= 0 or batch <= 0:
        return
    scale = 2 if IS_COMPLEX else 1
    out_len, red_len = (m, n) if trans == "N" else (n, m)
    # Along op(A)'s rows (the outputs) and columns (the reduction), in reals.
    stride_ao, stride_ar = (scale, lda * scale) if trans == "N" else (lda * scale, scale)
    # Python floats reach a Triton kernel as fp32 scalars, so D/Z alpha and beta are rounded
    # to fp32 (the cases' values are exact in fp32; otherwise a ~1e-8 relative change).
    alpha, beta = complex(alpha), complex(beta)
    block_o, block_r = _blocks(trans, out_len, y.dtype, y.device.type)
    grid = (triton.cdiv(out_len, block_o), batch)
    a_array, x_array, y_array = arrays if arrays is not None else (y, y, y)
    _gemv_kernel[grid](
        a, x, y, a_array, x_array, y_array, out_len, red_len,
        stride_ao, stride_ar, incx * scale, incy * scale,
        stride_a * scale, stride_x * scale, stride_y * scale,
        alpha.real, alpha.imag, beta.real, beta.imag,
        COMPLEX=IS_COMPLEX, CONJ=trans == "C" and IS_COMPLEX, BETA_ZERO=beta == 0,
        POINTER_ARRAYS=arrays is not None, BLOCK_O=block_o, BLOCK_R=block_r, num_warps=4)


def gemv(trans: str, m: int, n: int, alpha, A: torch.Tensor, lda: int, x: torch.Tensor,
         incx: int, beta, y: torch.Tensor, incy: int) -> None:
    _launch(trans, m, n, alpha, A, lda, x, incx, beta, y, incy)


def gemv_strided_batched(trans: str, m: int, n: int, alpha, A: torch.Tensor, lda: int,
                         strideA: int, x: torch.Tensor, incx: int, stridex: int, beta,
                         y: torch.Tensor, incy: int, stridey: int, batchCount: int) -> None:
    _launch(trans, m, n, alpha, A, lda, x, incx, beta, y, incy, batch=batchCount,
            stride_a=strideA, stride_x=stridex, stride_y=stridey)


def _pointers(buffers, count: int, device) -> torch.Tensor:
    # cuBLAS's device arrays of pointers (Aarray[i] is batch i's matrix), as int64 addresses.
    return torch.tensor([t.data_ptr() for t in buffers[:count]], dtype=torch.int64,
                        device=device)


def gemv_batched(trans: str, m: int, n: int, alpha, Aarray: list, lda: int, xarray: list,
                 incx: int, beta, yarray: list, incy: int, batchCount: int) -> None:
    if batchCount <= 0:
        return
    device = yarray[0].device
    arrays = tuple(_pointers(b, batchCount, device) for b in (Aarray, xarray, yarray))
    _launch(trans, m, n, alpha, Aarray[0], lda, xarray[0], incx, beta, yarray[0], incy,
            batch=batchCount, arrays=arrays)


kernel = __ENTRY__
