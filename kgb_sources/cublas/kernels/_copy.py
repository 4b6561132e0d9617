# __NAME__: cuBLAS copy, y[i * incy] = x[i * incx] for i < n; every other element of y (the gaps
# between strided elements) stays as it was. __ELEMENT__ One program copies BLOCK elements; complex
# ones as a [BLOCK, 2] tile, so unit-stride complex data moves in contiguous pairs.
import torch
import triton
import triton.language as tl

WIDTH = __WIDTH__


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, incx, incy, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    # int64 offsets: i * inc * WIDTH passes 2^31 for the largest vectors.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if WIDTH == 1:
        # Real elements: a plain 1-D tile (no [BLOCK, 1] shape for the compiler to carry).
        tl.store(y_ptr + i * incy, tl.load(x_ptr + i * incx, mask=i < n), mask=i < n)
    else:
        part = tl.arange(0, WIDTH)
        mask = (i < n)[:, None]
        values = tl.load(x_ptr + (i * incx * WIDTH)[:, None] + part[None, :], mask=mask)
        tl.store(y_ptr + (i * incy * WIDTH)[:, None] + part[None, :], values, mask=mask)


def kernel(n: int, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int) -> None:
    if n <= 0:
        return None
    block = 2048
    _copy_kernel[(triton.cdiv(n, block),)](x, y, n, incx, incy, WIDTH=WIDTH, BLOCK=block,
                                          num_warps=8)
    return None
