# op: aten.full
# expect: wrong_shape_or_dtype
# Writes one element and returns it expanded (stride 0) to the requested size: every element
# reads right, but the output is one value seen many times, not the new tensor aten.full
# returns (a caller that writes into it writes every element at once).
import torch
import triton
import triton.language as tl


@triton.jit
def _one(out_ptr, value):
    tl.store(out_ptr, value)


def kernel(size, fill_value, dtype, device):
    one = torch.empty(1, dtype=dtype, device=device)
    _one[(1,)](one, fill_value)
    return one.view([1] * len(size)).expand(list(size))
