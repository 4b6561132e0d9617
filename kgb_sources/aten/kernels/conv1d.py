# conv1d (groups=1) as a conv2d over a height-1 image: x (N, C, L) and weight (O, C, KL) are
# viewed as (N, C, 1, L) and (O, C, 1, KL), so the implicit-GEMM kernel below serves both:
# out[(n, oh, ow), o] = sum over k = (c, kh, kw) of
# x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] * weight[o, c, kh, kw], zero outside the
# input (that is the padding, on both sides). One program computes a BLOCK_M x BLOCK_N tile of
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


def _single(value) -> int:
    if isinstance(value, int):
        return value
    return int(tuple(value)[0])


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride=1, padding=0, dilation=1) -> torch.Tensor:
    n, c, length = x.shape
    o, c_w, kl = weight.shape
    if c_w != c:
        raise ValueError(f"conv1d (groups=1): weight has {c_w} input channels, x has {c}")
    s, p, d = _single(stride), _single(padding), _single(dilation)
    out_len = (length + 2 * p - d * (kl - 1) - 1) // s + 1
    out = torch.empty((n, o, 1, out_len), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out.squeeze(2)
    x4, w4 = x.unsqueeze(2), weight.unsqueeze(2)  # views: (N, C, 1, L), (O, C, 1, KL)
    if x.device.type == "cuda":
        block_m, block_n, block_k = 128, (64 if o <= 64 else 128), 32
    else:
        block_m, block_n, block_k = 64, (16 if o <= 16 else 32), 32
    grid = (triton.cdiv(n * out_len, block_m), triton.cdiv(o, block_n))
    _conv2d_kernel[grid](
        x4, w4, bias if bias is not None else weight, out,
        n, c, 1, length, o, 1, out_len, 1, kl, 1, s, 0, p, 1, d,
        x4.stride(0), x4.stride(1), x4.stride(2), x4.stride(3),
        w4.stride(0), w4.stride(1), w4.stride(2), w4.stride(3),
        HAS_BIAS=bias is not None, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=8 if block_m == 128 else 4)
    return out.squeeze(2)
