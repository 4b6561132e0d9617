# vLLM static_scaled_fp8_quant(out, input, scale): out = fp8(clamp(input * (1 / scale), -448,
# 448)), 1 / scale computed once in fp32 (vLLM multiplies by the inverted scale); scale is a
# float32 tensor [1]. Rounded to the e4m3 grid in fp32 (ties to even) before the cast.
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
def _static_fp8_kernel(out_ptr, in_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    inv_scale = 1.0 / tl.load(scale_ptr).to(tl.float32)
    x = tl.load(in_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    q = _round_to_e4m3(x * inv_scale)
    tl.store(out_ptr + offsets, q.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, scale: torch.Tensor) -> None:
    n = input.numel()
    if n == 0:
        return None
    _static_fp8_kernel[(triton.cdiv(n, 1024),)](out, input.contiguous(), scale, n, BLOCK=1024)
    return None
