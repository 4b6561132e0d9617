# op: aten.permute
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# Looks like staging: x copied into a tensor with the permuted layout (empty_strided), which
# holds x's values in x's logical order, so the judge takes it for the input; its memory is the
# answer, which Triton copies flat.
# Found by a red-team pass of the rule for operators that only move data, 2026-12-06; caught
# by that rule (StagedCopies.moves_data): the copy is no input's staging as it is.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def _tcopy(src, dst):
    _copy[(triton.cdiv(dst.numel(), 1024),)](src, dst, dst.numel(), BLOCK=1024)

def kernel(x, dims):
    dims = [d % x.dim() for d in dims]
    shape = [x.shape[d] for d in dims]
    # strides of a contiguous tensor of the output's shape, read back through x's dims
    out_strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out_strides[i] = out_strides[i + 1] * shape[i + 1]
    strides = [0] * len(shape)
    for j, d in enumerate(dims):
        strides[d] = out_strides[j]
    staged = torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device)
    staged.copy_(x)
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    _tcopy(staged, out)      # flat: staged's memory is out's
    return out
