# vLLM dynamic_per_token_scaled_fp8_quant(out, input, scales, scale_ub): per token, scale =
# max(min(max|x|, scale_ub[0]) / 448, 1 / (448 * 512)) (the upper bound only when scale_ub is
# given) is written to scales[token, 0], and out = fp8(clamp(x / scale, -448, 448)) (divided,
# not multiplied by an inverse). One program per token: a max pass, then the quantisation.
import torch
import triton
import triton.language as tl


@triton.jit
def _round_to_e4m3(v):
    v = tl.minimum(tl.maximum(v, -448.0), 448.0)
    exponent = ((v.to(tl.int32, bitcast=True) >> 23) & 0xFF) - 127
    exponent = tl.maximum(exponent, -6)  # below 2^-6 the e4m3 step is 2^-9 (subnormals)
    step = ((exponent - 3 + 127) << 23).to(tl.float32, bitcast=True)
    inv_step = ((127 - (exponent - 3)) << 23).to(tl.float32, bitcast=True)
    q = v * inv_step  # exact: a power of two
    q = (q + 12582912.0) - 12582912.0  # round half to even to an integer (|q| <= 16)
    return q * step


@triton.jit
def _per_token_fp8_kernel(out_ptr, scales_ptr, in_ptr, ub_ptr, N, HAS_UB: tl.constexpr,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    largest = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        x = tl.load(in_ptr + row * N + idx, mask=idx < N, other=0.0).to(tl.float32)
        largest = tl.maximum(largest, tl.abs(x))
    absmax = tl.max(largest, axis=0)
    if HAS_UB:
        absmax = tl.minimum(absmax, tl.load(ub_ptr))
    scale = tl.maximum(absmax / 448.0, 1.0 / (448.0 * 512.0))
    tl.store(scales_ptr + row, scale)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(in_ptr + row * N + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * N + idx,
                 _round_to_e4m3(x / scale).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, scales: torch.Tensor, scale_ub) -> None:  # noqa: ANN001
    n = input.numel()
    if n == 0:
        return None
    source = input.contiguous()
    hidden = source.shape[-1]
    _per_token_fp8_kernel[(n // hidden,)](out, scales, source,
                                          scale_ub if scale_ub is not None else scales, hidden,
                                          HAS_UB=scale_ub is not None,
                                          BLOCK=min(triton.next_power_of_2(hidden), 1024))
    return None
