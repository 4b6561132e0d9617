# vLLM rms_norm_per_block_quant(out, input, weight, scales, epsilon, scale_ub, residual,
# group_size, is_scale_transposed). x = input (+ residual in fp32; residual <- x rounded, in
# place); rstd over the whole unrounded fp32 row; normed = ((x * rstd) rounded * weight)
# rounded to the dtype. Per group of group_size columns: scale = max(min(max|normed|,
# scale_ub) / qmax, min_scale) (qmax 448, min 1/(448*512) for fp8; 127, 2^-23 for int8),
# stored at scales[token, group] through the scales' strides (row-major or transposed);
# fp8: out = e4m3(normed / scale); int8: out = round_half_even(normed * (1 / scale)).
# One program per row: a pass for the squares, then one pass per group.
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
def _per_block_kernel(out_ptr, scales_ptr, in_ptr, w_ptr, ub_ptr, res_ptr, N, num_groups,
                      scale_stride_token, scale_stride_group, eps, QMAX: tl.constexpr,
                      MIN_SCALE: tl.constexpr, IS_INT8: tl.constexpr, HAS_UB: tl.constexpr,
                      HAS_RESIDUAL: tl.constexpr, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = in_ptr + row * N
    r_row = res_ptr + row * N
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            x += tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    gcols = tl.arange(0, GROUP)
    for group in range(0, num_groups):
        idx = group * GROUP + gcols
        x = tl.load(x_row + idx).to(tl.float32)
        if HAS_RESIDUAL:
            x += tl.load(r_row + idx).to(tl.float32)
            tl.store(r_row + idx, x.to(res_ptr.dtype.element_ty))
        w = tl.load(w_ptr + idx).to(tl.float32)
        normed = (x * rstd).to(in_ptr.dtype.element_ty).to(tl.float32)
        normed = (normed * w).to(in_ptr.dtype.element_ty).to(tl.float32)
        absmax = tl.max(tl.abs(normed), axis=0)
        if HAS_UB:
            absmax = tl.minimum(absmax, tl.load(ub_ptr).to(tl.float32))
        scale = tl.maximum(absmax / QMAX, MIN_SCALE)
        tl.store(scales_ptr + row * scale_stride_token + group * scale_stride_group, scale)
        if IS_INT8:
            v = tl.minimum(tl.maximum(normed * (1.0 / scale), -128.0), 127.0)
            v = (v + 12582912.0) - 12582912.0  # round half to even
            tl.store(out_row + idx, v.to(tl.int8))
        else:
            q = _round_to_e4m3(normed / scale)
            tl.store(out_row + idx, q.to(out_ptr.dtype.element_ty))


def kernel(out, input, weight, scales, epsilon, scale_ub, residual, group_size,
           is_scale_transposed):  # noqa: ANN001, ANN201
    n = input.shape[-1]
    rows = input.numel() // max(n, 1)
    if rows == 0:
        return None
    is_int8 = out.dtype == torch.int8
    source = input.contiguous()
    _per_block_kernel[(rows,)](
        out, scales, source, weight.contiguous(),
        scale_ub if scale_ub is not None else scales,
        residual if residual is not None else source, n, n // group_size,
        scales.stride(0), scales.stride(1), float(epsilon),
        QMAX=127.0 if is_int8 else 448.0,
        MIN_SCALE=2.0 ** -23 if is_int8 else 1.0 / (448.0 * 512.0),
        IS_INT8=is_int8, HAS_UB=scale_ub is not None, HAS_RESIDUAL=residual is not None,
        GROUP=int(group_size), BLOCK=min(triton.next_power_of_2(n), 1024))
    return None
