# op: aten.relu
# expect: wrong_output
# Right except for large inputs, where it writes NaN: NaN never passes, whatever the tolerance.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu_nan(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.where(x > 0, x, 0.0)
    y = tl.where(x > 3.0, float('nan'), y)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu_nan[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out
