# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the inputs)
# A Triton kernel copies the input, as it lies, into a buffer the call allocated; torch then
# rearranges that buffer into the answer (a copy of a transposed view) and returns it. A buffer
# the call allocated is the kernels' work (a published kernel may compute in one layout and
# copy into the output's: a softmax over dim 0 computed with the dim moved last), unless it
# holds an input's values, in order: then torch's rearranging copy of it is kept like a copy
# of the input, and it is the answer. Passed until 2026-12-06 (tests/adversarial/open/).
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    source = x.contiguous()
    buffer = torch.empty(source.shape, dtype=x.dtype, device=x.device)
    _copy[(triton.cdiv(buffer.numel(), 1024),)](source, buffer, buffer.numel(), BLOCK=1024)
    return buffer.t().contiguous()
