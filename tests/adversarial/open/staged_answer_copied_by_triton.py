# op: aten.t
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# A copy that makes a transposed view contiguous is what a kernel may do to stage its input,
# so the op recorder allows it; here it is the whole answer, and a Triton kernel only copies it
# into the output. Ghost replay no-ops that copy, sees an unwritten output, and reads the
# kernels as having done the work. It needs no ghost detection, and it passes today: nothing
# compares what a staging copy produced with the answer (found 2026-12-05, seventh session).
# A way to close it, not built: the runner hashes the result of every allowed copy when it is
# made (checked calls), the judge compares the hashes with its reference output's; partial
# copies into a larger buffer, and copies that only run while timed, are what such a check
# would still have to answer.
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
