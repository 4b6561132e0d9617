# cublasSrot_v2: cuBLAS rot (a Givens rotation applied to two vectors), for i < n:
#   x[i * incx] = c * x_i + s * y_i,   y[i * incy] = -s * x_i + c * y_i
# with x_i, y_i the values before the call, in fp32; the gaps between strided elements stay as
# they were. Each program loads both tiles before it stores either.
import torch
import triton
import triton.language as tl


@triton.jit
def _rot_kernel(x_ptr, y_ptr, n, incx, incy, c, s, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i * incx, mask=mask)
    y = tl.load(y_ptr + i * incy, mask=mask)
    tl.store(x_ptr + i * incx, c * x + s * y, mask=mask)
    tl.store(y_ptr + i * incy, c * y - s * x, mask=mask)


def kernel(n: int, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int, c: float,
           s: float) -> None:
    if n <= 0:
        return None
    block = 2048
    _rot_kernel[(triton.cdiv(n, block),)](x, y, n, incx, incy, float(c), float(s), BLOCK=block,
                                         num_warps=8)
    return None
