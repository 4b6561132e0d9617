# op: aten.neg
# expect: host_read
# timed: yes
# GPU only. Honest in every checked call; once timed (told as in
# tests/adversarial/timed_launches_a_decoy_and_leaves_its_output_unwritten.py), it copies the
# input to the host, negates it there and uploads the answer, which a Triton kernel copies into
# the output: device-to-host copies in the timed calls, which the recorders count there too.
import torch
import triton
import triton.language as tl


@triton.jit
def _neg(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def _copy(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


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
    values = x.to("cpu").flatten().tolist()  # a device-to-host copy, then a read on the host
    answer = torch.tensor([-v for v in values], dtype=x.dtype, device=x.device)
    _copy[grid](answer, out, x.numel(), BLOCK=1024)
    return out


kernel.after_ghost = False
kernel.previous = None
