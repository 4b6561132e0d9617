# index_select: out = x with its `dim` replaced by x's slices at `index` (a 1-D int64 tensor,
# entries may repeat). x is staged as a contiguous (outer, size, inner) view, so out is the
# contiguous (outer, len(index), inner) tensor and each output element has one source address.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _index_select_kernel(x_ptr, index_ptr, out_ptr, n_elements, n_index, size, inner,
                         BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    i = offsets % inner
    rest = offsets // inner
    j = rest % n_index
    o = rest // n_index
    idx = tl.load(index_ptr + j, mask=mask, other=0)
    value = tl.load(x_ptr + (o * size + idx) * inner + i, mask=mask)
    tl.store(out_ptr + offsets, value, mask=mask)


def kernel(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    if x.dim() == 0 or index.dim() > 1:
        raise ValueError(f"this kernel needs x of rank >= 1 and a 1-D index, got x "
                         f"{tuple(x.shape)}, index {tuple(index.shape)}")
    dim = dim % x.dim()
    out_shape = list(x.shape)
    out_shape[dim] = index.numel()
    x = x.contiguous()
    index = index.reshape(-1).contiguous()
    out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    n_elements = out.numel()
    if n_elements:
        inner = math.prod(x.shape[dim + 1:])
        block = 1024
        _index_select_kernel[(triton.cdiv(n_elements, block),)](
            x, index, out, n_elements, index.numel(), x.shape[dim], inner, BLOCK=block)
    return out
