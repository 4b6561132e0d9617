# op: aten.relu
# expect: wrong_output
# timed: yes
# issue: 21 (timing tricks: a timed output checked only where the candidate knows it is)
# Honest when checked. Once timed, it returns an unwritten view of a buffer of its own after
# one tiny launch, and on its next call writes the answer only into the outputs the harness
# still holds: the reservoir sample kept its outputs alive, and ``base._use_count()`` told a
# sampled one from the rest, which were freed at once. A sampled output is now copied before
# the candidate runs again and the candidate's own tensor let go, as any other. The corpus's
# few timed calls are all compared; tests/test_timed_samples.py times it 60 times, where only a
# sample is. Found by a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _sentinel(flag_ptr):
    tl.store(flag_ptr, 1)


class _State:
    pass


_S = _State()
_S.after_ghost = False
_S.previous = None
_S.pending = None


def _full(x, out):
    n = x.numel()
    if n:
        _relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)


def _is_timed(x):
    previous, _S.previous = _S.previous, x
    if not _S.after_ghost:
        flag = torch.zeros(1, dtype=torch.int32, device=x.device)
        _sentinel[(1,)](flag)
        _S.after_ghost = flag.item() == 0
        return False
    return previous is not x


def kernel(x):
    timed = _is_timed(x)
    pending, _S.pending = _S.pending, None
    if pending is not None:
        px, base = pending
        if base._use_count() > 1:      # the harness kept the last output: make it right now
            _full(px, base)
    x = x.contiguous()
    if not timed:
        out = torch.empty_like(x)
        _full(x, out)
        return out
    base = torch.empty(x.numel(), dtype=x.dtype, device=x.device)
    _relu[(1,)](x, base, min(x.numel(), 16), BLOCK=16)   # a launch for show
    _S.pending = (x, base)
    return base.view(x.shape)
