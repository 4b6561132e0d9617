# conv2d (groups=1) as an implicit GEMM: out[(n, oh, ow), o] = sum over k = (c, kh, kw) of
# x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] * weight[o, c, kh, kw], zero outside the
# image (that is the padding, on both sides). One program computes a BLOCK_M x BLOCK_N tile of
# (output pixels x output channels), gathering the x tile for each K step from its strides (no
# im2col buffer), with an fp32 accumulator and the bias in the epilogue.
import torch
import triton
import triton.language as tl


@triton.jit
def _conv2d_kernel(x_ptr, w_ptr, bias_ptr, out_ptr,
                   N, C, H, W, O, OH, OW, KH, KW,
                   stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                   sxn, sxc, sxh, sxw, swo, swc, swh, sww,
                   HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    M = N * OH * OW
    K = C * KH * KW
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    n_mask = offs_n < O
    img = offs_m // (OH * OW)
    pix = offs_m % (OH * OW)
    oh = pix // OW
    ow = pix % OW
    x_base = img.to(tl.int64) * sxn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = offs_k < K
        c = offs_k // (KH * KW)
        r = offs_k % (KH * KW)
        kh = r // KW
        kw = r % KW
        ih = oh[:, None] * stride_h - pad_h + kh[None, :] * dil_h
        iw = ow[:, None] * stride_w - pad_w + kw[None, :] * dil_w
        x_mask = (m_mask[:, None] & k_mask[None, :] & (ih >= 0) & (ih < H)
                  & (iw >= 0) & (iw < W))
        x_tile = tl.load(x_ptr + x_base[:, None] + c[None, :] * sxc + ih * sxh + iw * sxw,
                         mask=x_mask, other=0.0)
        w_tile = tl.load(w_ptr + offs_n[None, :] * swo + c[:, None] * swc + kh[:, None] * swh
                         + kw[:, None] * sww, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        # "ieee": torch's conv computes float32 exactly, and TF32 misses its tolerance.
        acc = tl.dot(x_tile, w_tile, acc, input_precision="ieee")
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=n_mask, other=0.0)
        acc += bias.to(tl.float32)[None, :]
    out_offs = (img.to(tl.int64)[:, None] * O * OH * OW + offs_n[None, :] * OH * OW
                + pix[:, None])
    tl.store(out_ptr + out_offs, acc.to(out_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    values = tuple(int(v) for v in value)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride=1, padding=0, dilation=1) -> torch.Tensor:
    n, c, h, w = x.shape
    o, c_w, kh, kw = weight.shape
    if c_w != c:
        raise ValueError(f"conv2d (groups=1): weight has {c_w} input channels, x has {c}")
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.empty((n, o, oh, ow), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    if x.device.type == "cuda":
        block_m, block_n, block_k = 128, (64 if o <= 64 else 128), 32
    else:
        block_m, block_n, block_k = 64, (16 if o <= 16 else 32), 32
    grid = (triton.cdiv(n * oh * ow, block_m), triton.cdiv(o, block_n))
    _conv2d_kernel[grid](
        x, weight, bias if bias is not None else weight, out,
        n, c, h, w, o, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        weight.stride(0), weight.stride(1), weight.stride(2), weight.stride(3),
        HAS_BIAS=bias is not None, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=8 if block_m == 128 else 4)
    return out
