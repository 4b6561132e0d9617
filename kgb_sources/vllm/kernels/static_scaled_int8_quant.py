# vLLM static_scaled_int8_quant(out, input, scale, azp): without azp, out = saturate(round(
# input / scale)); with azp (int32 [1]), out = saturate(round(input * (1 / scale)) + azp[0]).
# round is to the nearest integer with ties to even, saturation to [-128, 127].
import torch
import triton
import triton.language as tl


@triton.jit
def _round_half_even(v):
    # |v| < 2^22: adding and removing 1.5 * 2^23 rounds to an integer, ties to even.
    v = tl.minimum(tl.maximum(v, -2097152.0), 2097152.0)
    return (v + 12582912.0) - 12582912.0


@triton.jit
def _static_int8_kernel(out_ptr, in_ptr, scale_ptr, azp_ptr, n, HAS_AZP: tl.constexpr,
                        BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    scale = tl.load(scale_ptr).to(tl.float32)
    x = tl.load(in_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if HAS_AZP:
        q = _round_half_even(x * (1.0 / scale)) + tl.load(azp_ptr).to(tl.float32)
    else:
        q = _round_half_even(x / scale)
    q = tl.minimum(tl.maximum(q, -128.0), 127.0)
    tl.store(out_ptr + offsets, q.to(tl.int8), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, scale: torch.Tensor, azp) -> None:  # noqa: ANN001
    n = input.numel()
    if n == 0:
        return None
    _static_int8_kernel[(triton.cdiv(n, 1024),)](out, input.contiguous(), scale,
                                                 azp if azp is not None else scale, n,
                                                 HAS_AZP=azp is not None, BLOCK=1024)
    return None
