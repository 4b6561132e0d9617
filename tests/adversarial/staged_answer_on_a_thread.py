# op: aten.t
# expect: reference_used
# screen: rejected
# The staging copy that is the answer runs on a thread the call starts and joins, where the
# call's own recorder does not run: threads a call starts record into the call, their copies
# kept with its own.
import threading

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    box = []
    worker = threading.Thread(target=lambda: box.append(x.t().contiguous()))
    worker.start()
    worker.join()
    staged = box[0]
    out = torch.empty_like(staged)
    _copy[(triton.cdiv(staged.numel(), 1024),)](staged, out, staged.numel(), BLOCK=1024)
    return out
