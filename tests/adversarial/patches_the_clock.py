# op: aten.relu
# expect: tampering
# screen: rejected
# Stops the wall clock so any kernel would look infinitely fast.
import time as clock_module
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def _right_relu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


clocks = clock_module
clocks.perf_counter = lambda: 0.0


def kernel(x):
    return _right_relu(x)
