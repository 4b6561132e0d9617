# Writes its result into the input and returns it: the output aliases the input, which
# aten.relu (not relu_) must not do.
import triton
import triton.language as tl


@triton.jit
def _relu_inplace(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    y = x if x.is_contiguous() else x.contiguous()
    n = y.numel()
    _relu_inplace[(triton.cdiv(n, 256),)](y, n, BLOCK=256)
    return y
