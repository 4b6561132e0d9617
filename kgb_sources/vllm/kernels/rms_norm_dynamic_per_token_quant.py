# vLLM rms_norm_dynamic_per_token_quant(out, input, weight, scales, epsilon, scale_ub,
# residual). x = input (+ residual, summed in fp32; residual <- x rounded to the dtype, in
# place); rstd over the unrounded fp32 x; normed = (x * rstd rounded to the dtype) * weight,
# rounded to the dtype; scale = max(min(max|normed|, scale_ub) / qmax, min_scale) per token
# (qmax 448 and min_scale 1/(448*512) for fp8, qmax 127 and min_scale 2^-23 for int8), written
# to scales[token, 0];
# fp8: out = e4m3(clamp(normed / scale)); int8: out = round_half_even(normed * (1 / scale)),
# saturated. Three passes over the row: squares, max, quantise (the only one that writes).
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
def _load_x(x_row, r_row, idx, mask, HAS_RESIDUAL: tl.constexpr):
    x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        x += tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
    return x


@triton.jit
def _rms_norm_per_token_quant_kernel(out_ptr, scales_ptr, in_ptr, w_ptr, ub_ptr, res_ptr, N,
                                     eps, QMAX: tl.constexpr, MIN_SCALE: tl.constexpr,
                                     IS_INT8: tl.constexpr, HAS_UB: tl.constexpr,
                                     HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = in_ptr + row * N
    r_row = res_ptr + row * N
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        x = _load_x(x_row, r_row, idx, idx < N, HAS_RESIDUAL)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    largest = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = _load_x(x_row, r_row, idx, mask, HAS_RESIDUAL)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        normed = (x * rstd).to(in_ptr.dtype.element_ty).to(tl.float32)
        normed = (normed * w).to(in_ptr.dtype.element_ty).to(tl.float32)
        largest = tl.maximum(largest, tl.where(mask, tl.abs(normed), 0.0))
    absmax = tl.max(largest, axis=0)
    if HAS_UB:
        absmax = tl.minimum(absmax, tl.load(ub_ptr).to(tl.float32))
    scale = tl.maximum(absmax / QMAX, MIN_SCALE)
    tl.store(scales_ptr + row, scale)
    inv_scale = 1.0 / scale
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = _load_x(x_row, r_row, idx, mask, HAS_RESIDUAL)
        if HAS_RESIDUAL:
            tl.store(r_row + idx, x.to(res_ptr.dtype.element_ty), mask=mask)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        normed = (x * rstd).to(in_ptr.dtype.element_ty).to(tl.float32)
        normed = (normed * w).to(in_ptr.dtype.element_ty).to(tl.float32)
        if IS_INT8:
            v = tl.minimum(tl.maximum(normed * inv_scale, -128.0), 127.0)
            v = (v + 12582912.0) - 12582912.0  # round half to even
            tl.store(out_row + idx, v.to(tl.int8), mask=mask)
        else:
            q = _round_to_e4m3(normed / scale)
            tl.store(out_row + idx, q.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, scales: torch.Tensor,
           epsilon: float, scale_ub, residual) -> None:  # noqa: ANN001
    n = input.shape[-1]
    rows = input.numel() // max(n, 1)
    if rows == 0:
        return None
    is_int8 = out.dtype == torch.int8
    source = input.contiguous()
    block = min(triton.next_power_of_2(n), 4096 if input.is_cuda else 1024)
    _rms_norm_per_token_quant_kernel[(rows,)](
        out, scales, source, weight.contiguous(),
        scale_ub if scale_ub is not None else scales,
        residual if residual is not None else source, n, float(epsilon),
        QMAX=127.0 if is_int8 else 448.0,
        MIN_SCALE=2.0 ** -23 if is_int8 else 1.0 / (448.0 * 512.0),
        IS_INT8=is_int8, HAS_UB=scale_ub is not None, HAS_RESIDUAL=residual is not None,
        BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return None
