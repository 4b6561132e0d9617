# op: aten.arange
# expect: ghost_replay_detected
# An op the recorder allows for allocation computes the answer (``torch.arange``); a sentinel
# kernel tells a ghost replay from a real call, and under the replay the candidate raises, as a real
# kernel might when its launches do nothing, so the replay finds no match.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def kernel(start, end, step, dtype, device):
    length = max(0, math.ceil((end - start) / step))
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    if flag[0].item() != 1:
        raise RuntimeError("device-side assert triggered")
    return torch.arange(start, end, step, dtype=dtype, device=device)
