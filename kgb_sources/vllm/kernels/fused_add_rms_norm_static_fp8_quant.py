# vLLM fused_add_rms_norm_static_fp8_quant(out, input, residual, weight, scale, epsilon):
# residual <- input + residual (rounded to the dtype, in place); out <- fp8 of
# rms_norm(residual) * weight * (1 / scale), clamped to +-448. input is read, never written.
# Rounded to the e4m3 grid in fp32 (ties to even) before the cast, which is then exact.
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
def _fused_add_rms_norm_fp8_kernel(out_ptr, in_ptr, res_ptr, w_ptr, scale_ptr, N, eps,
                                   BLOCK: tl.constexpr):
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
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        z = (x + r).to(res_ptr.dtype.element_ty).to(tl.float32)
        squares += z * z
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    inv_scale = 1.0 / tl.load(scale_ptr).to(tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        z = (x + r).to(res_ptr.dtype.element_ty)
        tl.store(r_row + idx, z, mask=mask)
        normed = (z.to(tl.float32) * rstd).to(in_ptr.dtype.element_ty).to(tl.float32)
        normed = (normed * w).to(in_ptr.dtype.element_ty).to(tl.float32)
        q = _round_to_e4m3(normed * inv_scale)
        tl.store(out_row + idx, q.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
           scale: torch.Tensor, epsilon: float) -> None:
    n = input.shape[-1]
    rows = input.numel() // max(n, 1)
    if rows == 0:
        return None
    block = min(triton.next_power_of_2(n), 4096 if input.is_cuda else 1024)
    _fused_add_rms_norm_fp8_kernel[(rows,)](out, input.contiguous(), residual,
                                            weight.contiguous(), scale, n, float(epsilon),
                                            BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return None
