# op: aten.relu
# expect: heldout_failed
# expect-nvidia: wrong_output (the GPU's large shown cases come before the held-out ones and catch the fit)
# Handles the element counts of the shown cases only (1, 4773, 2112, 3111 elements).
import torch
import triton
import triton.language as tl

SHOWN_SIZES = (1, 4773, 2112, 3111)


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


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel() if x.numel() in SHOWN_SIZES else x.numel() // 2
    _relu[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out
