# Dies by a signal mid-call, after a real launch, as a runner whose kernel faults does on a GPU
# (an illegal address there; on the CPU backend a kernel's wild access is stopped first, so the
# signal is sent directly): the harness must answer crashed, saying which signal, and go on.
import os
import signal

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def kernel(x):
    out = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    os.kill(os.getpid(), signal.SIGSEGV)
    return out
