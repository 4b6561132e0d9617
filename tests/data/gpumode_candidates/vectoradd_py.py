# GPU MODE's answer shape: custom_kernel(data), data = (a, b).
import torch
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a + b, mask=mask)


def custom_kernel(data):
    a, b = data
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    _add[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    return out
