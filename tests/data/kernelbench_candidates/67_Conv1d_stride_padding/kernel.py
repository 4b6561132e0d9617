"""Conv1d with stride and zero padding as an implicit GEMM: each program accumulates a tile of
(output channels x output positions) for one batch item over (input channel, tap)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C_in, L_in, C_out, L_out, stride, padding,
                   KERNEL_SIZE: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr,
                   BLOCK_R: tl.constexpr):
    n = tl.program_id(0).to(tl.int64)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    lo = tl.program_id(2) * BLOCK_L + tl.arange(0, BLOCK_L)
    co_mask = co < C_out
    lo_mask = lo < L_out
    n_reduced = C_in * KERNEL_SIZE  # the weight's row: (ci, k)
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    x_base = x_ptr + n * C_in * L_in
    for r0 in range(0, n_reduced, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        r_mask = r < n_reduced
        ci = r // KERNEL_SIZE
        k = r % KERNEL_SIZE
        li = lo[None, :] * stride - padding + k[:, None]
        x_mask = r_mask[:, None] & lo_mask[None, :] & (li >= 0) & (li < L_in)
        xv = tl.load(x_base + ci[:, None] * L_in + li, mask=x_mask, other=0.0)
        wv = tl.load(w_ptr + co[:, None] * n_reduced + r[None, :],
                     mask=co_mask[:, None] & r_mask[None, :], other=0.0)
        acc += tl.dot(wv.to(tl.float32), xv.to(tl.float32), input_precision="ieee")
    acc += tl.load(b_ptr + co, mask=co_mask, other=0.0).to(tl.float32)[:, None]
    out_offsets = n * C_out * L_out + co[:, None] * L_out + lo[None, :]
    tl.store(out_ptr + out_offsets, acc.to(out_ptr.dtype.element_ty),
             mask=co_mask[:, None] & lo_mask[None, :])


def kernel(x, weight, bias, in_channels, out_channels, kernel_size, stride, padding):
    x = x.contiguous()
    weight = weight.contiguous()
    batch, _, length = x.shape
    length_out = (length + 2 * padding - kernel_size) // stride + 1
    out = torch.empty((batch, out_channels, length_out), dtype=x.dtype, device=x.device)
    BLOCK_CO, BLOCK_L, BLOCK_R = 32, 64, 32
    grid = (max(batch, 1), max(triton.cdiv(out_channels, BLOCK_CO), 1),
            max(triton.cdiv(length_out, BLOCK_L), 1))
    _conv1d_kernel[grid](x, weight, bias, out, in_channels, length, out_channels, length_out,
                         stride, padding,
                         KERNEL_SIZE=kernel_size, BLOCK_CO=BLOCK_CO, BLOCK_L=BLOCK_L,
                         BLOCK_R=BLOCK_R)
    return out
