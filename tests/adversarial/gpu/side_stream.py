# op: aten.relu
# expect: deferred_work
# screen: rejected
# GPU only. Launches its kernel on a stream of its own and returns without waiting for it: the
# timer's events, recorded on the harness's stream, close before the work is done.
import torch
import triton
import triton.language as tl

_side = None


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    global _side
    if _side is None:
        _side = torch.cuda.Stream()
    x = x.contiguous()
    out = torch.empty_like(x)
    _side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_side):
        _relu[(triton.cdiv(max(x.numel(), 1), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
