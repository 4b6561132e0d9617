# op: aten.neg
# expect: host_read
# screen: rejected
# numpy computes the answer on the host; a one-element sentinel kernel tells a ghost replay
# (every launch a no-op) from a real call, and only then does the candidate return garbage,
# so ghost replay cannot catch it: the host reads of the input's values do.
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.full([BLOCK], 1, tl.int32))


def _launches_are_real(device):
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    return flag[0].item() == 1


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)   # ghost replay: look like a real kernel that did nothing
    as32 = x.to(torch.float32).cpu().contiguous()
    values = np.asarray(np.negative(as32.numpy()))
    return torch.from_numpy(values).to(device=x.device, dtype=x.dtype)
