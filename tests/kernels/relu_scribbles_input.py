# Right output in a fresh tensor, but it also overwrites its input (as scratch space):
# aten.relu must leave x alone, so the answer is input_mutated.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu_using_input_as_scratch(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)
    tl.store(x_ptr + offsets, x * 0.5, mask=mask)


def kernel(x):
    x = x if x.is_contiguous() else x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _relu_using_input_as_scratch[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out
