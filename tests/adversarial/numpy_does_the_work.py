# op: aten.relu
# expect: host_read
# screen: rejected
# Computes with numpy (invisible to the torch-op recorder) and launches a Triton kernel
# that does nothing useful; the recorders count its reads of the input on the host. (Through
# fp32, since numpy has no bf16: the values come back rounded to the input's dtype.)
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr, n, BLOCK: tl.constexpr):
    # A real launch that does none of the work, so "no Triton launch" cannot be the verdict.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(ptr + offsets, tl.load(ptr + offsets, mask=mask), mask=mask)


def _launch_something(x):
    scratch = torch.empty(64, dtype=torch.float32, device=x.device)
    _touch[(1,)](scratch, 64, BLOCK=64)


def kernel(x):
    _launch_something(x)
    values = np.asarray(np.maximum(x.detach().float().cpu().numpy(), 0))
    return torch.from_numpy(values).to(x.device, x.dtype)
