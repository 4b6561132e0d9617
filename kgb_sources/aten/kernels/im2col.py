# im2col (= F.unfold): out[n, (c*KH + kh)*KW + kw, oh*OW + ow] =
# x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw], zero where that falls in the padding.
# A pure gather: each program writes BLOCK output elements of the contiguous
# (N, C*KH*KW, OH*OW) result, reading x through its strides. A 3-D (C, H, W) input gives a 2-D
# (C*KH*KW, OH*OW) result.
import torch
import triton
import triton.language as tl


@triton.jit
def _im2col_kernel(x_ptr, out_ptr, total, C, H, W, OH, OW, KH, KW,
                   stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, sxn, sxc, sxh, sxw,
                   BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    L = OH * OW
    rows = C * KH * KW
    col = offs % L
    row = (offs // L) % rows
    img = offs // (L * rows)
    c = row // (KH * KW)
    kh = (row // KW) % KH
    kw = row % KW
    ih = (col // OW) * stride_h - pad_h + kh * dil_h
    iw = (col % OW) * stride_w - pad_w + kw * dil_w
    inside = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    values = tl.load(x_ptr + img * sxn + c * sxc + ih * sxh + iw * sxw, mask=inside, other=0.0)
    tl.store(out_ptr + offs, values, mask=mask)


def kernel(x: torch.Tensor, kernel_size, dilation, padding, stride) -> torch.Tensor:
    batched = x.dim() == 4
    x4 = x if batched else x.unsqueeze(0)
    n, c, h, w = x4.shape
    (kh, kw), (dh, dw) = tuple(kernel_size), tuple(dilation)
    (ph, pw), (sh, sw) = tuple(padding), tuple(stride)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.empty((n, c * kh * kw, oh * ow), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        block = 1024
        _im2col_kernel[(triton.cdiv(total, block),)](
            x4, out, total, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw,
            x4.stride(0), x4.stride(1), x4.stride(2), x4.stride(3), BLOCK=block)
    return out if batched else out.squeeze(0)
