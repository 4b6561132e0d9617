# op: aten.relu
# expect: reference_used
# screen: rejected
# Launches a Triton kernel for show; torch.relu computes the answer.
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
    return torch.relu(x)
