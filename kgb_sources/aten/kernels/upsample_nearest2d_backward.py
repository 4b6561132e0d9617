# upsample_nearest2d_backward: the gradient of nearest upsampling from (H_in, W_in) to
# (H_out, W_out). The forward reads source row src(oh) = min(floor(oh * scale_h), H_in - 1)
# with scale_h = float32(H_in) / float32(H_out) (or float32(1 / scales_h) when given), the
# product taken in float32 (ATen's nearest_idx), and columns likewise; so grad_input[n, c, i,
# j] is the sum of grad_output[n, c, oh, ow] over every oh with src(oh) == i and ow with
# src(ow) == j. Each program computes BLOCK input-gradient elements as a gather (no atomics,
# deterministic): it tries the few output rows/columns near i * H_out / H_in, keeps those
# whose source is i (the same float32 rule), and sums them in fp32.
import struct
import torch
import triton
import triton.language as tl


@triton.jit
def _source(dst, scale, size_in):
    """ATen's nearest source index of output index dst (float32 product, floored, clamped)."""
    return tl.minimum(tl.floor(dst.to(tl.float32) * scale).to(tl.int64), size_in - 1)


@triton.jit
def _upsample_nearest2d_backward_kernel(grad_ptr, out_ptr, total, C, H_in, W_in, H_out, W_out,
                                        scale_h, scale_w, WIN_H, WIN_W,
                                        sgn, sgc, sgh, sgw, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    j = offs % W_in
    i = (offs // W_in) % H_in
    plane = offs // (W_in * H_in)
    base = grad_ptr + (plane // C) * sgn + (plane % C) * sgc
    first_h = (i * H_out) // H_in - 1  # one before the first candidate, for rounding slack
    first_w = (j * W_out) // W_in - 1
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for th in range(0, WIN_H):
        oh = first_h + th
        row_ok = mask & (oh >= 0) & (oh < H_out)
        row_ok = row_ok & (_source(tl.maximum(oh, 0), scale_h, H_in) == i)
        for tw in range(0, WIN_W):
            ow = first_w + tw
            ok = row_ok & (ow >= 0) & (ow < W_out)
            ok = ok & (_source(tl.maximum(ow, 0), scale_w, W_in) == j)
            acc += tl.load(base + oh * sgh + ow * sgw, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _f32(value: float) -> float:
    """value rounded to the nearest fp32 (round to nearest even), as a Python float."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _scale(size_in: int, size_out: int, scale) -> float:
    """ATen's compute_scales_value in float32: 1/scale if given and positive, else in/out.
    (An fp32 quotient of two fp32 values is the fp64 quotient rounded once to fp32: double
    rounding is harmless for a division at these widths.)"""
    if scale is not None and scale > 0:
        return _f32(1.0 / scale)
    return _f32(_f32(size_in) / _f32(size_out))


def kernel(grad_output: torch.Tensor, output_size, input_size, scales_h=None,
           scales_w=None) -> torch.Tensor:
    n, c, h_in, w_in = (int(s) for s in input_size)
    h_out, w_out = (int(s) for s in output_size)
    if tuple(grad_output.shape) != (n, c, h_out, w_out):
        raise ValueError(f"grad_output has shape {tuple(grad_output.shape)}, expected "
                         f"{(n, c, h_out, w_out)}")
    grad_input = torch.empty((n, c, h_in, w_in), dtype=grad_output.dtype,
                             device=grad_output.device)
    total = grad_input.numel()
    if total:
        # Candidates per input row: at most ceil(H_out / H_in) sources map to it, plus slack
        # of one on either side for float32 rounding of the scale.
        win_h = -(-h_out // h_in) + 3
        win_w = -(-w_out // w_in) + 3
        block = 1024
        _upsample_nearest2d_backward_kernel[(triton.cdiv(total, block),)](
            grad_output, grad_input, total, c, h_in, w_in, h_out, w_out,
            _scale(h_in, h_out, scales_h), _scale(w_in, w_out, scales_w), win_h, win_w,
            grad_output.stride(0), grad_output.stride(1), grad_output.stride(2),
            grad_output.stride(3), BLOCK=block)
    return grad_input
