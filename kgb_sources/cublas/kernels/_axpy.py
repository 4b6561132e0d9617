# __NAME__: cuBLAS axpy, y[i * incy] = alpha * x[i * incx] + y[i * incy] for i < n, in __DTYPE__;
# the gaps between strided elements of y stay as they were. One program per BLOCK elements.
import struct

import torch
import triton
import triton.language as tl


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, n, incx, incy, alpha_hi, alpha_lo, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    dtype = y_ptr.dtype.element_ty
    # Triton passes a Python float as fp32: alpha arrives as two fp32 halves, whose sum in
    # the vector's precision is alpha to about 48 bits (exact for fp32).
    alpha = tl.cast(alpha_hi, dtype) + tl.cast(alpha_lo, dtype)
    x = tl.load(x_ptr + i * incx, mask=mask)
    y = tl.load(y_ptr + i * incy, mask=mask)
    tl.store(y_ptr + i * incy, alpha * x + y, mask=mask)


def _fp32_halves(value: float) -> tuple[float, float]:
    hi = struct.unpack("f", struct.pack("f", value))[0]
    return hi, value - hi


def kernel(n: int, alpha: float, x: torch.Tensor, incx: int, y: torch.Tensor,
           incy: int) -> None:
    if n <= 0:
        return None
    alpha_hi, alpha_lo = _fp32_halves(float(alpha))
    block = 2048
    _axpy_kernel[(triton.cdiv(n, block),)](x, y, n, incx, incy, alpha_hi, alpha_lo,
                                          BLOCK=block, num_warps=8)
    return None
