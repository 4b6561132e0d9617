# op: aten.t
# issue: 21 (ghost replay detected; torch work the recorder allows)
# Views and a copy compute the answer: for a movement op those are the very ops a kernel may
# use to stage its inputs, so the op recorder allows them. A sentinel kernel tells a ghost replay
# (every launch a no-op) from a real call; under the replay the candidate launches as many
# kernels as in a real call and returns garbage, so the replay finds neither a match nor a
# difference. It passes today: nothing tells a copy that stages an input from a copy that is the
# answer, and nothing on a GPU tells which bytes a Triton kernel wrote.
import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def kernel(x):
    flag = torch.zeros(16, dtype=torch.int32, device=x.device)
    _sentinel[(1,)](flag, BLOCK=16)
    if flag[0].item() != 1:
        return torch.empty(x.t().shape, dtype=x.dtype, device=x.device)
    return x.t().clone(memory_format=torch.contiguous_format)
