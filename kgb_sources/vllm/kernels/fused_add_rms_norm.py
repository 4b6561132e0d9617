# vLLM fused_add_rms_norm(input, residual, weight, epsilon), in place: residual <- input +
# residual (rounded to the dtype), input <- rms_norm(residual) * weight with vLLM's rounding
# (x * rstd rounded to the dtype, then times weight). The sum of squares is taken over the
# rounded residual. Pass 1 sums squares without writing; pass 2 re-reads both originals,
# so no element is loaded after this program stored it.
import torch
import triton
import triton.language as tl


@triton.jit
def _fused_add_rms_norm_kernel(in_ptr, res_ptr, w_ptr, in_row_stride, N, eps,
                               BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = in_ptr + row * in_row_stride
    r_row = res_ptr + row * N
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        z = (x + r).to(res_ptr.dtype.element_ty).to(tl.float32)
        squares += z * z
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        z = (x + r).to(res_ptr.dtype.element_ty)
        tl.store(r_row + idx, z, mask=mask)
        normed = (z.to(tl.float32) * rstd).to(in_ptr.dtype.element_ty).to(tl.float32)
        tl.store(x_row + idx, (normed * w).to(in_ptr.dtype.element_ty), mask=mask)


def kernel(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
           epsilon: float) -> None:
    n = input.shape[-1]
    rows = input.numel() // max(n, 1)
    if rows == 0:
        return None
    block = min(triton.next_power_of_2(n), 4096 if input.is_cuda else 1024)
    _fused_add_rms_norm_kernel[(rows,)](input, residual, weight.contiguous(), n, n,
                                        float(epsilon), BLOCK=block,
                                        num_warps=8 if block >= 2048 else 4)
    return None
