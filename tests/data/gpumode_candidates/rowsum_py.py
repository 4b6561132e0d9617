# kgb's answer shape: kernel(data), the one tensor generate_input returns.
import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        total += tl.load(x_ptr + row * cols + start + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(total, axis=0))


def kernel(data):
    x = data.contiguous()
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    _row_sum[(x.shape[0],)](x, out, x.shape[1], BLOCK=1024)
    return out
