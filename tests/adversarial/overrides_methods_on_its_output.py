# op: aten.neg
# expect: wrong_shape_or_dtype
# screen: rejected
# Returns a plain tensor that was never written, with instance attributes shadowing the methods a
# harness reads an output through (detach, cpu, untyped_storage, numpy): they compute the answer
# with torch when called, after kernel(...) returned and where no recorder looks.
import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def _launches_are_real(device):
    """A ghost replay (every launch a no-op) leaves the flag 0: then look like a real kernel
    that did nothing, so the replay finds no match."""
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    return flag[0].item() == 1


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)
    out = torch.empty_like(x)
    answer = lambda *args, **kwargs: torch.neg(x)  # noqa: E731
    out.detach = answer
    out.cpu = answer
    out.clone = answer
    out.untyped_storage = lambda: torch.neg(x).untyped_storage()
    return out
