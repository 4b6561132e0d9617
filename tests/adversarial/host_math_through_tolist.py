# op: aten.exp
# expect: host_read
# Reads the input's values to the host with tolist(), computes with Python's math, and builds
# the output from the list; a sentinel kernel tells a ghost replay from a real call.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def _launches_are_real(device):
    """A ghost replay (every launch a no-op) leaves the flag 0."""
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    return flag[0].item() == 1


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)
    values = [math.exp(v) for v in x.reshape(-1).tolist()]
    return torch.tensor(values, dtype=x.dtype, device=x.device).reshape(x.shape)
