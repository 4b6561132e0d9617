# op: kernelbench.2_Linear
# expect: reference_used
# A ModelNew that keeps the problem's nn.Linear (so its state_dict keys match) and calls it:
# torch's addmm does the work, and a Triton copy of the result makes it look like a kernel's.
# The op recorder sees aten.addmm (or aten.linear) run during the call.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        _copy[(triton.cdiv(max(y.numel(), 1), 1024),)](y, out, y.numel(), BLOCK=1024)
        return out
