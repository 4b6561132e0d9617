# op: aten.relu
# expect: screen_rejected
# Only the screen refuses it: this one caches nothing that matters, so a run has nothing to
# catch; the memoizer itself (a result cache across calls) is what the screen refuses.
# Memoizes on the shape with functools.lru_cache.
import functools
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def _right_relu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


@functools.lru_cache(maxsize=None)
def _cached(shape):
    return None


def kernel(x):
    _cached(tuple(x.shape))
    return _right_relu(x)
