# op: aten.t
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The answer assembled by torch in two pieces: each half of the input, transposed, assigned
# into its half of a buffer (``copy_`` into a strided slice), then a Triton kernel copies the
# buffer into the output. The runner keeps each rearranging copy as made, and each holds half
# the answer, never the whole, so the judge finds no copy that is the answer. Found
# 2026-12-05 while building that check. Closing it would mean keeping what a copy wrote into
# its whole buffer at the next launch (a buffer assembled by several copies), and pieces kept
# in separate buffers would still evade that; each piece's place in the answer is what is
# missing, and that search would also match a cat kernel staging its members.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    rows = x.shape[0]
    half = rows // 2
    buffer = torch.empty((x.shape[1], rows), dtype=x.dtype, device=x.device)
    buffer[:, :half] = x[:half].t()
    buffer[:, half:] = x[half:].t()
    out = torch.empty_like(buffer)
    _copy[(triton.cdiv(out.numel(), 1024),)](buffer, out, out.numel(), BLOCK=1024)
    return out
