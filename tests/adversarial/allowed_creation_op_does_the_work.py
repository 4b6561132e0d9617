# op: aten.arange
# expect: ghost_replay_matched
# The answer is one op a kernel may use to allocate (``torch.arange``), which the op recorder
# allows, and it rearranges nothing, so no kept copy holds it; a Triton launch that writes a
# scratch buffer makes the call look like a kernel's. With every launch a no-op the output is
# still right: ghost replay says the result does not come from the Triton kernels.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr):
    tl.store(ptr, 0.0)


def kernel(start, end, step, dtype, device):
    scratch = torch.empty(1, dtype=torch.float32, device=device)
    _touch[(1,)](scratch)
    return torch.arange(start, end, step, dtype=dtype, device=device)
