# op: aten.cumsum
# expect: reference_used
# screen: rejected
# torch.cumsum computes the answer inside a block that switches torch's dispatch modes off,
# and a Triton kernel copies it out. Only torch's profiler sees it there, and on the CPU
# aten::cumsum's one inner op is a dtype view (aten::to): a profile that took any op with an
# inner op for a composite that hands its work on (as it did) let it through.
import torch
import triton
import triton.language as tl
from torch._library.fake_class_registry import _disable_current_modes


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def kernel(x, dim):
    with _disable_current_modes():
        answer = torch.cumsum(x, dim).contiguous()
    out = torch.empty_like(answer)
    n = answer.numel()
    _copy[(triton.cdiv(max(n, 1), 1024),)](answer, out, n, BLOCK=1024)
    return out
