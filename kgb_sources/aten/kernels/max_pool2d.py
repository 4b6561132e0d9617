# max_pool2d (ceil_mode=False): out[n, c, i, j] = max over (kh, kw) of
# x[n, c, i*sh - ph + kh*dh, j*sw - pw + kw*dw], where positions in the padding count as -inf
# (they never win). NaN propagates, as in ATen. Each program computes BLOCK outputs of the
# contiguous (N, C, OH, OW) result from one flat index, reading x through its strides.
import torch
import triton
import triton.language as tl


@triton.jit
def _max_pool2d_kernel(x_ptr, out_ptr, total, C, H, W, OH, OW, KH, KW,
                       stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, sxn, sxc, sxh, sxw,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    base = x_ptr + (plane // C) * sxn + (plane % C) * sxc
    best = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for kh in range(0, KH):
        ih = oh * stride_h - pad_h + kh * dil_h
        row_ok = mask & (ih >= 0) & (ih < H)
        for kw in range(0, KW):
            iw = ow * stride_w - pad_w + kw * dil_w
            ok = row_ok & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * sxh + iw * sxw, mask=ok, other=float("-inf")).to(tl.float32)
            best = tl.where((v > best) | (v != v), v, best)
    tl.store(out_ptr + offs, best.to(out_ptr.dtype.element_ty), mask=mask)


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    values = tuple(int(v) for v in value)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def kernel(x: torch.Tensor, kernel_size, stride, padding=0, dilation=1) -> torch.Tensor:
    n, c, h, w = x.shape
    (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride)
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.empty((n, c, oh, ow), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        block = 1024
        _max_pool2d_kernel[(triton.cdiv(total, block),)](
            x, out, total, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw,
            x.stride(0), x.stride(1), x.stride(2), x.stride(3), BLOCK=block)
    return out
