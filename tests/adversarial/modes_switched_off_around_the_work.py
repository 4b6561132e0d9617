# op: aten.neg
# expect: reference_used
# screen: rejected
# Computes the answer with torch inside a block that switches torch's dispatch modes off (a
# private helper, reached through a module that re-exports it), and launches its kernels
# outside that block, where the recorders are back: the mode stacks look right at every
# launch and after the call.
import torch
import triton
import triton.language as tl
from torch._library.fake_class_registry import _disable_current_modes


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def kernel(x):
    with _disable_current_modes():
        answer = torch.neg(x).contiguous()
    out = torch.empty_like(answer)
    n = answer.numel()
    _copy[(triton.cdiv(max(n, 1), 1024),)](answer, out, n, BLOCK=1024)
    return out.view(x.shape) if x.dim() else out.reshape(())
