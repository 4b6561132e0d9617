"""relu(conv2d(x) + conv bias + extra bias) in one kernel (stride 1, no padding): each program
accumulates a tile of (output channels x output pixels) for one batch item as an implicit
GEMM over (input channel, kernel row, kernel column), then adds both biases and clamps at
zero.
ModelNew: KernelBench's form, whose forward launches the same kernels."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv2d_bias_relu_kernel(x_ptr, w_ptr, conv_b_ptr, extra_b_ptr, out_ptr,
                             C_in, H, W, C_out, H_out, W_out,
                             KERNEL_SIZE: tl.constexpr, BLOCK_CO: tl.constexpr,
                             BLOCK_P: tl.constexpr, BLOCK_R: tl.constexpr):
    n = tl.program_id(0).to(tl.int64)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = tl.program_id(2) * BLOCK_P + tl.arange(0, BLOCK_P)
    co_mask = co < C_out
    p_mask = p < H_out * W_out
    oh = p // W_out
    ow = p % W_out
    n_reduced = C_in * KERNEL_SIZE * KERNEL_SIZE  # the weight's row: (ci, kh, kw)
    acc = tl.zeros((BLOCK_CO, BLOCK_P), dtype=tl.float32)
    x_base = x_ptr + n * C_in * H * W
    for r0 in range(0, n_reduced, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        r_mask = r < n_reduced
        ci = r // (KERNEL_SIZE * KERNEL_SIZE)
        kh = (r // KERNEL_SIZE) % KERNEL_SIZE
        kw = r % KERNEL_SIZE
        x_offsets = (ci[:, None] * H * W + (oh[None, :] + kh[:, None]) * W
                     + (ow[None, :] + kw[:, None]))
        xv = tl.load(x_base + x_offsets, mask=r_mask[:, None] & p_mask[None, :], other=0.0)
        wv = tl.load(w_ptr + co[:, None] * n_reduced + r[None, :],
                     mask=co_mask[:, None] & r_mask[None, :], other=0.0)
        acc += tl.dot(wv.to(tl.float32), xv.to(tl.float32), input_precision="ieee")
    acc += tl.load(conv_b_ptr + co, mask=co_mask, other=0.0).to(tl.float32)[:, None]
    acc += tl.load(extra_b_ptr + co, mask=co_mask, other=0.0).to(tl.float32)[:, None]
    acc = tl.where(acc < 0, 0.0, acc)
    out_offsets = n * C_out * H_out * W_out + co[:, None] * (H_out * W_out) + p[None, :]
    tl.store(out_ptr + out_offsets, acc.to(out_ptr.dtype.element_ty),
             mask=co_mask[:, None] & p_mask[None, :])


def _launch(x, bias, conv_weight, conv_bias, in_channels, out_channels, kernel_size):
    # The order of Model.state_dict(): a module's own parameters (bias) come before its
    # submodules' (conv.weight, conv.bias).
    x = x.contiguous()
    conv_weight = conv_weight.contiguous()
    bias = bias.reshape(-1)
    batch, _, height, width = x.shape
    height_out = height - kernel_size + 1
    width_out = width - kernel_size + 1
    out = torch.empty((batch, out_channels, height_out, width_out), dtype=x.dtype,
                      device=x.device)
    BLOCK_CO, BLOCK_P, BLOCK_R = 32, 128, 32
    grid = (max(batch, 1), max(triton.cdiv(out_channels, BLOCK_CO), 1),
            max(triton.cdiv(height_out * width_out, BLOCK_P), 1))
    _conv2d_bias_relu_kernel[grid](x, conv_weight, conv_bias, bias, out,
                                   in_channels, height, width, out_channels,
                                   height_out, width_out,
                                   KERNEL_SIZE=kernel_size, BLOCK_CO=BLOCK_CO,
                                   BLOCK_P=BLOCK_P, BLOCK_R=BLOCK_R)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.args = (in_channels, out_channels, kernel_size)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)  # holds conv.*; never called
        self.bias = nn.Parameter(torch.zeros(out_channels, 1, 1))

    def forward(self, x):
        return _launch(x, self.bias, self.conv.weight, self.conv.bias, *self.args)
