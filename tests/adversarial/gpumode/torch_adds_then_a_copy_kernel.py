# op: gpumode.vectoradd_py
# expect: reference_used
# GPU MODE's answer shape, custom_kernel(data), with torch doing the work (a + b) and a Triton
# copy of the result to look like a kernel's: the op recorder sees aten.add during the call.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def custom_kernel(data):
    a, b = data
    total = (a + b).contiguous()
    out = torch.empty_like(total)
    _copy[(triton.cdiv(total.numel(), 1024),)](total, out, total.numel(), BLOCK=1024)
    return out
