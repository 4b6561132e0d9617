# op: aten.neg
# expect: deferred_work
# timed: yes
# screen: rejected
# screen: rejected
# GPU only. Honest in every checked call; once timed (told as in
# tests/adversarial/timed_launches_a_decoy_and_leaves_its_output_unwritten.py), it launches its
# kernel on a stream of its own and returns without waiting: the timer's end event, on the
# harness's stream, is recorded before the work runs.
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
    x = x.contiguous()
    out = torch.empty_like(x)
    grid = (triton.cdiv(max(x.numel(), 1), 1024),)
    if not timed:
        _neg[grid](x, out, x.numel(), BLOCK=1024)
        return out
    if kernel.side is None:
        kernel.side = torch.cuda.Stream()
    kernel.side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(kernel.side):
        _neg[grid](x, out, x.numel(), BLOCK=1024)
    return out


kernel.after_ghost = False
kernel.previous = None
kernel.side = None
