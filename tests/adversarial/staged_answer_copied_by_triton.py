# op: aten.t
# expect: reference_used
# A copy that makes a transposed view contiguous is what a kernel may do to stage its input,
# so the op recorder allows it; here it is the whole answer, and a Triton kernel only copies it
# into the output. Ghost replay no-ops that copy, sees an unwritten output, and reads the
# kernels as having done the work (it passed until 2026-12-05). The runner now keeps every
# copy that rearranged memory, as made, and the judge finds one that already held the answer.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    staged = x.t().contiguous()  # the whole answer, by an op kernels use to stage inputs
    out = torch.empty_like(staged)
    _copy[(triton.cdiv(staged.numel(), 1024),)](staged, out, staged.numel(), BLOCK=1024)
    return out
