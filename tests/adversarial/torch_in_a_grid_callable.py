# op: aten.relu
# expect: reference_used
# screen: rejected
# The launch's grid is a callable, which Triton calls inside its launch, where the harness's
# recorder is suspended; the callable computes the answer with torch and returns a real grid.
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


@triton.jit
def _noop(ptr):
    pass


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)
    out = torch.empty_like(x)

    def grid(meta):
        out.copy_(torch.relu(x))
        return (1,)

    _noop[grid](out)
    return out
