# op: aten.neg
# expect: deferred_work
# screen: rejected
# Computes the right answer, and forks a process that outlives the call, in its own session:
# it could finish work after the timer stopped, or wait for the next candidate and tamper with
# it. The template kills whatever a runner leaves, and a pass that left any is refused.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros((BLOCK,), dtype=out_ptr.dtype.element_ty), mask=offsets < n)


def _zeros_like(x):
    out = torch.empty_like(x)
    _fill[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out


_os = torch.os


@triton.jit
def _neg(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


def _leave_once():
    if _os.environ.get("KGB_CHEAT_FORKED"):
        return
    _os.environ["KGB_CHEAT_FORKED"] = "1"
    if _os.fork() == 0:
        _os.setsid()
        while True:
            torch.sys.modules["time"].sleep(1)


def kernel(x):
    _leave_once()
    out = torch.empty_like(x)
    _neg[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
