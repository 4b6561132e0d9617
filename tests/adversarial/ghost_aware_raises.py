# op: aten.t
# expect: ghost_replay_detected
# Views and a copy compute the answer (ops the recorder allows for staging); a sentinel kernel
# tells a ghost replay from a real call, and under the replay the candidate raises, as a real
# kernel might when its launches do nothing, so the replay finds no match.
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
        raise RuntimeError("device-side assert triggered")
    return x.t().clone(memory_format=torch.contiguous_format)
