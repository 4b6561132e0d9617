# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The transpose done by torch on an integer view of the input (same element size): the kept
# copy holds the answer's bits as integers, which read as numbers never match it. A kept copy
# with as many bytes as an output is also read as the output's dtype, bit for bit. Found by a
# red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


_SAME_WIDTH = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def kernel(x):
    bits = x.view(_SAME_WIDTH[x.element_size()])
    staged = bits.t().contiguous()          # the answer, as integers
    out = torch.empty(staged.shape, dtype=x.dtype, device=x.device)
    _copy[(triton.cdiv(out.numel(), 1024),)](staged.view(x.dtype), out, out.numel(), BLOCK=1024)
    return out
