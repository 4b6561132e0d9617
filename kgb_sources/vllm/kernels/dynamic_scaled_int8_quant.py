# vLLM dynamic_scaled_int8_quant(out, input, scales, azp), per token. Symmetric (azp None):
# scales[t] = max|x| / 127, out = saturate(round(x * (127 / max|x|))) (0 where max|x| is 0).
# Asymmetric: s = (max - min) / 255, zp = round(-128 - min / s), scales[t] = s, azp[t] = zp,
# out = saturate(round(x * (1 / s)) + zp). round: nearest, ties to even; saturate to int8.
import torch
import triton
import triton.language as tl


@triton.jit
def _round_half_even(v):
    # |v| < 2^22: adding and removing 1.5 * 2^23 rounds to an integer, ties to even.
    v = tl.minimum(tl.maximum(v, -2097152.0), 2097152.0)
    return (v + 12582912.0) - 12582912.0


@triton.jit
def _dynamic_int8_kernel(out_ptr, scales_ptr, azp_ptr, in_ptr, N, HAS_AZP: tl.constexpr,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    largest = tl.full([BLOCK], float("-inf"), tl.float32)
    smallest = tl.full([BLOCK], float("inf"), tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(in_ptr + row * N + idx, mask=mask, other=0.0).to(tl.float32)
        if HAS_AZP:
            largest = tl.maximum(largest, tl.where(mask, x, float("-inf")))
            smallest = tl.minimum(smallest, tl.where(mask, x, float("inf")))
        else:
            largest = tl.maximum(largest, tl.where(mask, tl.abs(x), 0.0))
    if HAS_AZP:
        top = tl.max(largest, axis=0)
        bottom = tl.min(smallest, axis=0)
        scale = (top - bottom) / 255.0
        zero_point = _round_half_even(-128.0 - bottom / scale)
        tl.store(scales_ptr + row, scale)
        tl.store(azp_ptr + row, zero_point.to(tl.int32))
        multiplier = 1.0 / scale
    else:
        absmax = tl.max(largest, axis=0)
        tl.store(scales_ptr + row, absmax / 127.0)
        multiplier = tl.where(absmax == 0.0, 0.0, 127.0 / absmax)
        zero_point = 0.0
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(in_ptr + row * N + idx, mask=mask, other=0.0).to(tl.float32)
        q = _round_half_even(x * multiplier) + zero_point
        q = tl.minimum(tl.maximum(q, -128.0), 127.0)
        tl.store(out_ptr + row * N + idx, q.to(tl.int8), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, scales: torch.Tensor, azp) -> None:  # noqa: ANN001
    n = input.numel()
    if n == 0:
        return None
    source = input.contiguous()
    hidden = source.shape[-1]
    _dynamic_int8_kernel[(n // hidden,)](out, scales, azp if azp is not None else scales, source,
                                         hidden, HAS_AZP=azp is not None,
                                         BLOCK=min(triton.next_power_of_2(hidden), 1024))
    return None
