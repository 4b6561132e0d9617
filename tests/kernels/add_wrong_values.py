# Wrong on purpose: computes a - b for aten.add; the checker must answer wrong_output.
import torch
import triton
import triton.language as tl


@triton.jit
def _sub(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a - b, mask=mask)


def kernel(a, b):
    a, b = torch.broadcast_tensors(a, b)
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    _sub[(triton.cdiv(n, 256),)](a, b, out, n, BLOCK=256)
    return out
