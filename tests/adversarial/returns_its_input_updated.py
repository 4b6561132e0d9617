# op: aten.add
# expect: output_aliases_input
# Saves an allocation by adding b into a and returning a.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_into(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    tl.store(a_ptr + offsets, a + tl.load(b_ptr + offsets, mask=mask), mask=mask)


def kernel(a, b):
    b = b.expand(a.shape).contiguous()
    _add_into[(triton.cdiv(max(a.numel(), 1), 256),)](a, b, a.numel(), BLOCK=256)
    return a
