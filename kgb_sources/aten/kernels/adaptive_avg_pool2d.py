# adaptive_avg_pool2d: output cell (i, j) of an (OH, OW) grid averages x over rows
# [floor(i*H/OH), ceil((i+1)*H/OH)) and columns [floor(j*W/OW), ceil((j+1)*W/OW)), ATen's bins
# (they overlap when OH does not divide H). Integer arithmetic gives the bounds exactly. Each
# program computes BLOCK outputs of the contiguous (N, C, OH, OW) result, looping over the
# largest bin (MAX_KH x MAX_KW) with masks, summing in fp32.
import torch
import triton
import triton.language as tl


@triton.jit
def _adaptive_avg_pool2d_kernel(x_ptr, out_ptr, total, C, H, W, OH, OW, MAX_KH, MAX_KW,
                                sxn, sxc, sxh, sxw, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    base = x_ptr + (plane // C) * sxn + (plane % C) * sxc
    start_h = (oh * H) // OH
    end_h = ((oh + 1) * H + OH - 1) // OH
    start_w = (ow * W) // OW
    end_w = ((ow + 1) * W + OW - 1) // OW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in range(0, MAX_KH):
        ih = start_h + kh
        row_ok = mask & (ih < end_h)
        for kw in range(0, MAX_KW):
            iw = start_w + kw
            ok = row_ok & (iw < end_w)
            acc += tl.load(base + ih * sxh + iw * sxw, mask=ok, other=0.0).to(tl.float32)
    count = ((end_h - start_h) * (end_w - start_w)).to(tl.float32)
    tl.store(out_ptr + offs, (acc / count).to(out_ptr.dtype.element_ty), mask=mask)


def _max_bin(size: int, out: int) -> int:
    """The longest bin: ceil((i+1)*size/out) - floor(i*size/out) over all i."""
    return max(-(-(i + 1) * size // out) - (i * size) // out for i in range(out))


def kernel(x: torch.Tensor, output_size) -> torch.Tensor:
    n, c, h, w = x.shape
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    out = torch.empty((n, c, oh, ow), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        block = 1024
        _adaptive_avg_pool2d_kernel[(triton.cdiv(total, block),)](
            x, out, total, c, h, w, oh, ow, _max_bin(h, oh), _max_bin(w, ow),
            x.stride(0), x.stride(1), x.stride(2), x.stride(3), BLOCK=block)
    return out
