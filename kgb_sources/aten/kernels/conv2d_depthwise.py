# Depthwise conv2d: F.conv2d with groups == C. Output channel o (of O = C * multiplier) sees
# only input channel o // multiplier: out[n, o, oh, ow] = bias[o] + sum over (kh, kw) of
# x[n, o // mult, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] * weight[o, 0, kh, kw], zero outside
# the image. No channel reduction means no GEMM: each program computes BLOCK outputs with fp32
# multiply-adds over the KH x KW window.
import torch
import triton
import triton.language as tl


@triton.jit
def _depthwise_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, total, O, H, W, OH, OW, KH, KW, MULT,
                      stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                      sxn, sxc, sxh, sxw, swo, swh, sww,
                      HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    # One flat index over the contiguous (N, O, OH, OW) output: a program covers BLOCK outputs
    # whatever planes they fall in, so small planes do not leave most lanes idle.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pix = offs % (OH * OW)
    plane = offs // (OH * OW)  # n * O + o
    o = plane % O
    img = plane // O
    oh = pix // OW
    ow = pix % OW
    x_base = x_ptr + img * sxn + (o // MULT) * sxc
    w_base = w_ptr + o * swo
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in range(0, KH):
        ih = oh * stride_h - pad_h + kh * dil_h
        row_ok = mask & (ih >= 0) & (ih < H)
        for kw in range(0, KW):
            iw = ow * stride_w - pad_w + kw * dil_w
            ok = row_ok & (iw >= 0) & (iw < W)
            xv = tl.load(x_base + ih * sxh + iw * sxw, mask=ok, other=0.0)
            wv = tl.load(w_base + kh * swh + kw * sww, mask=mask, other=0.0)
            acc += xv.to(tl.float32) * wv.to(tl.float32)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + o, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    values = tuple(int(v) for v in value)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride=1, padding=0, dilation=1) -> torch.Tensor:
    n, c, h, w = x.shape
    o, one, kh, kw = weight.shape
    if one != 1 or o % c:
        raise ValueError(f"depthwise conv2d needs weight (C * mult, 1, KH, KW) for C={c}, got "
                         f"{tuple(weight.shape)}")
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.empty((n, o, oh, ow), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    total = out.numel()
    block = 1024
    _depthwise_kernel[(triton.cdiv(total, block),)](
        x, weight, bias if bias is not None else weight, out, total, o, h, w, oh, ow, kh, kw,
        o // c,
        sh, sw, ph, pw, dh, dw, x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        weight.stride(0), weight.stride(2), weight.stride(3),
        HAS_BIAS=bias is not None, BLOCK=block)
    return out
