# rms_norm over the last dim: x / sqrt(mean(x^2) + eps) * weight, computed in fp32 whatever the
# storage dtype and rounded once to x's dtype, as torch's fused rms_norm does for fp16/bf16.
# One program per row; the row is streamed in BLOCK-sized pieces (sum of squares, then
# output), so any row length works.
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx, mask=idx < N, other=0.0).to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.contiguous()
    weight = weight.contiguous()
    out = torch.empty_like(x)
    n = x.shape[-1]
    if x.numel() == 0:
        return out
    rows = x.numel() // n
    # The interpreter simulates each program with numpy: keep its blocks small there.
    block = min(triton.next_power_of_2(n), 4096 if x.is_cuda else 1024)
    _rms_norm_kernel[(rows,)](x, weight, out, n, float(eps), BLOCK=block,
                              num_warps=8 if block >= 2048 else 4)
    return out
