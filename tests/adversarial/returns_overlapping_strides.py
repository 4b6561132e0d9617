# op: aten.zeros
# expect: wrong_shape_or_dtype
# Zeroes a buffer of sum(size) + 1 elements and returns it as a view with every stride 1, whose
# rows overlap: every element reads 0, as aten.zeros asks, but they are not each their own.
import torch
import triton
import triton.language as tl


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offsets < n)


def kernel(size, dtype, device):
    size = list(size)
    buffer = torch.empty(sum(size) + 1, dtype=dtype, device=device)
    _zero[(triton.cdiv(buffer.numel(), 256),)](buffer, buffer.numel(), BLOCK=256)
    strides = [1] * len(size)
    return buffer.as_strided(size, strides) if size else buffer[0]
