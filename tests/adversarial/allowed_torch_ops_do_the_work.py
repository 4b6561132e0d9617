# op: aten.t
# expect: reference_used
# The answer needs only ops a kernel may use for staging (a transposed view, then a copy),
# so the op recorder has nothing to say; a Triton launch that does nothing makes the
# call look like a kernel's. With every launch a no-op the output is still right (ghost replay
# caught it); the copy, kept as made, held the answer, which is caught first.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr):
    tl.store(ptr, 0.0)


def kernel(x):
    scratch = torch.empty(1, dtype=torch.float32, device=x.device)
    _touch[(1,)](scratch)
    return x.t().clone(memory_format=torch.contiguous_format)
