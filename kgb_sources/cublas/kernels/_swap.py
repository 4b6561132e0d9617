# __NAME__: cuBLAS swap, x[i * incx] <-> y[i * incy] for i < n; the gaps between strided elements
# stay as they were. __ELEMENT__ Each program loads both of its BLOCK-element tiles before it
# stores either, so the exchange needs no temporary buffer.
import torch
import triton
import triton.language as tl

WIDTH = __WIDTH__


@triton.jit
def _swap_kernel(x_ptr, y_ptr, n, incx, incy, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if WIDTH == 1:
        # Real elements: a plain 1-D tile (no [BLOCK, 1] shape for the compiler to carry).
        mask = i < n
        x_ptrs = x_ptr + i * incx
        y_ptrs = y_ptr + i * incy
    else:
        part = tl.arange(0, WIDTH)
        mask = (i < n)[:, None]
        x_ptrs = x_ptr + (i * incx * WIDTH)[:, None] + part[None, :]
        y_ptrs = y_ptr + (i * incy * WIDTH)[:, None] + part[None, :]
    x_values = tl.load(x_ptrs, mask=mask)
    y_values = tl.load(y_ptrs, mask=mask)
    tl.store(x_ptrs, y_values, mask=mask)
    tl.store(y_ptrs, x_values, mask=mask)


def kernel(n: int, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int) -> None:
    if n <= 0:
        return None
    block = 2048
    _swap_kernel[(triton.cdiv(n, block),)](x, y, n, incx, incy, WIDTH=WIDTH, BLOCK=block,
                                          num_warps=8)
    return None
