# op: aten.neg
# expect: host_read
# Reads every element with item() (a scalar read each, the kind a launch may need a few of) and
# writes the negated values back one by one with fill_.
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
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    flat_in, flat_out = x.reshape(-1), out.view(-1)
    for i in range(flat_in.numel()):
        flat_out[i].fill_(-flat_in[i].item())
    return out
