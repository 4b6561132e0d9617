# op: aten.relu
# expect: wrong_output
# timed: yes
# Honest in every checked call; once timed, its grid covers only the first half of the
# output, which takes half the time, and the rest is left as allocated.
# It knows it is timed from the ghost replay, the last check before timing, where a sentinel
# kernel's flag stays unwritten; of the two checked calls after timing, the one whose output
# is judged repeats its input tensor, which no timed call does.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


@triton.jit
def _sentinel(flag_ptr):
    tl.store(flag_ptr, 1)


def _is_timed(x):
    """The ghost replay (every launch a no-op, so the sentinel's flag stays unwritten) is the
    last check before timing. After it, the only checked call whose output is judged, the
    second of the two after timing, hands over the same tensor as the call before: a timing
    loop, cycling through its input sets, never does."""
    previous, kernel.previous = kernel.previous, x
    if not kernel.after_ghost:
        flag = torch.zeros(1, dtype=torch.int32, device=x.device)
        _sentinel[(1,)](flag)
        kernel.after_ghost = flag.item() == 0
        return False  # the ghost replay itself is answered like any checked call
    return previous is not x


def kernel(x):
    timed = _is_timed(x)
    x = x.contiguous()
    out = torch.empty_like(x)
    n = triton.cdiv(x.numel(), 2) if timed else x.numel()
    block = 64  # small blocks, so that half the elements is half the programs
    _relu[(triton.cdiv(max(n, 1), block),)](x, out, n, BLOCK=block)
    return out


kernel.after_ghost = False
kernel.previous = None
