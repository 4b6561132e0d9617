# op: aten.t
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the inputs)
# A Triton kernel copies the input, as it lies, into a buffer the call allocated; torch then
# rearranges that buffer into the answer (a copy of a transposed view) and returns it. The
# runner keeps rearranging copies of the inputs' values, followed through torch's own copies,
# but not copies of what the call allocated: a buffer a Triton kernel wrote is the kernels'
# work, and a published kernel may compute in one layout and copy into the output's (a softmax
# over dim 0 computed with the dim moved last). Found 2026-12-05 while building that check;
# telling the two apart needs to know what the kernel wrote (here, the input unchanged).
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
