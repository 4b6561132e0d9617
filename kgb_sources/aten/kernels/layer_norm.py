# layer_norm over the last dim: (x - mean) / sqrt(var + eps) * weight + bias, with the biased
# variance (divided by N), computed in fp32 whatever the storage dtype. One program per row;
# the row is streamed in BLOCK-sized pieces (mean, then centred variance, then output), so any
# row length works and the variance never suffers from E[x^2] - E[x]^2 cancellation.
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        total += tl.load(x_row + idx, mask=idx < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        centred = tl.where(mask, x - mean, 0.0)
        squares += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_row + idx, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.contiguous()
    weight, bias = weight.contiguous(), bias.contiguous()
    out = torch.empty_like(x)
    n = x.shape[-1]
    if x.numel() == 0:
        return out
    rows = x.numel() // n
    # The interpreter simulates each program with numpy: keep its blocks small there.
    block = min(triton.next_power_of_2(n), 4096 if x.is_cuda else 1024)
    _layer_norm_kernel[(rows,)](x, weight, bias, out, n, float(eps), BLOCK=block,
                                num_warps=8 if block >= 2048 else 4)
    return out
