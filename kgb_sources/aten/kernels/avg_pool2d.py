# avg_pool2d (ceil_mode=False, no divisor_override): the mean of x over each KH x KW window at
# (i*sh - ph, j*sw - pw). Padded positions add zero; the divisor is the window area, padding
# included, when count_include_pad (ATen's default), else the number of positions inside the
# image. Sums in fp32; each program computes BLOCK outputs of the contiguous (N, C, OH, OW)
# result from one flat index, reading x through its strides.
import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool2d_kernel(x_ptr, out_ptr, total, C, H, W, OH, OW, KH, KW,
                       stride_h, stride_w, pad_h, pad_w, sxn, sxc, sxh, sxw,
                       COUNT_PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    base = x_ptr + (plane // C) * sxn + (plane % C) * sxc
    h0 = oh * stride_h - pad_h
    w0 = ow * stride_w - pad_w
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in range(0, KH):
        ih = h0 + kh
        row_ok = mask & (ih >= 0) & (ih < H)
        for kw in range(0, KW):
            iw = w0 + kw
            ok = row_ok & (iw >= 0) & (iw < W)
            acc += tl.load(base + ih * sxh + iw * sxw, mask=ok, other=0.0).to(tl.float32)
    if COUNT_PAD:
        # ATen clips the window to the padded image: with ceil_mode=False it never leaves it,
        # so this is KH * KW, written the same way.
        count = ((tl.minimum(h0 + KH, H + pad_h) - h0)
                 * (tl.minimum(w0 + KW, W + pad_w) - w0))
    else:
        count = ((tl.minimum(h0 + KH, H) - tl.maximum(h0, 0))
                 * (tl.minimum(w0 + KW, W) - tl.maximum(w0, 0)))
    tl.store(out_ptr + offs, (acc / count.to(tl.float32)).to(out_ptr.dtype.element_ty),
             mask=mask)


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    values = tuple(int(v) for v in value)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def kernel(x: torch.Tensor, kernel_size, stride, padding=0,
           count_include_pad: bool = True) -> torch.Tensor:
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
    oh = (h + 2 * ph - kh) // sh + 1
    ow = (w + 2 * pw - kw) // sw + 1
    out = torch.empty((n, c, oh, ow), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        block = 1024
        _avg_pool2d_kernel[(triton.cdiv(total, block),)](
            x, out, total, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw,
            x.stride(0), x.stride(1), x.stride(2), x.stride(3),
            COUNT_PAD=bool(count_include_pad), BLOCK=block)
    return out
