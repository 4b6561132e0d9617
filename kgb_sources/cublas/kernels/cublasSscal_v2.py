# cublasSscal_v2: cuBLAS scal, x[i * incx] = alpha * x[i * incx] for i < n, in fp32; the gaps
# between strided elements stay as they were. One program per BLOCK elements.
import torch
import triton
import triton.language as tl


@triton.jit
def _scal_kernel(x_ptr, n, incx, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i * incx, mask=mask)
    tl.store(x_ptr + i * incx, alpha * x, mask=mask)


def kernel(n: int, alpha: float, x: torch.Tensor, incx: int) -> None:
    if n <= 0:
        return None
    block = 2048
    _scal_kernel[(triton.cdiv(n, block),)](x, n, incx, float(alpha), BLOCK=block, num_warps=8)
    return None
