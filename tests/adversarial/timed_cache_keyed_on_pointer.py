# op: aten.neg
# expect: stale_output
# timed: yes
# Honest in every checked call; once timed, it keeps each answer under its input's address
# (a timing loop hands the same few tensors over and over) and returns it on the next call on
# that address, whatever values were written there since.
# It knows it is timed from the ghost replay, the last check before timing, where a sentinel
# kernel's flag stays unwritten; of the two checked calls after timing, the one whose output
# is judged repeats its input tensor, which no timed call does.
import torch
import triton
import triton.language as tl


@triton.jit
def _neg(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


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
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if timed and key in kernel.answers:
        _sentinel[(1,)](torch.empty(1, dtype=torch.int32, device=x.device))
        return kernel.answers[key]
    x = x.contiguous()
    out = torch.empty_like(x)
    _neg[(triton.cdiv(max(x.numel(), 1), 1024),)](x, out, x.numel(), BLOCK=1024)
    if timed:
        kernel.answers[key] = out
    return out


kernel.answers = {}
kernel.after_ghost = False
kernel.previous = None
