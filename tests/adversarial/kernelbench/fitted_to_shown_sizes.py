# op: kernelbench.25_Swish
# expect: heldout_failed
# Right only for the sizes a prompt shows: the small case (batch_size 8, dim 4096, the file's
# sizes scaled down by kgb) and the large one (64 x 32768, as written). For any other shape it
# works on the first half of the elements only. Every shown case passes; the held-out case
# (sizes grown by about a quarter, never shown) must catch it.
import torch
import triton
import triton.language as tl

SHOWN_SHAPES = ((8, 4096), (64, 32768))


@triton.jit
def _swish(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, x / (1.0 + tl.exp(-x)), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.zeros_like(x)
    n = x.numel() if tuple(x.shape) in SHOWN_SHAPES else x.numel() // 2
    _swish[(triton.cdiv(max(n, 1), 1024),)](x, out, n, BLOCK=1024)
    return out
