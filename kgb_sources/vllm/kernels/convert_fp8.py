# vLLM convert_fp8(dst_cache, src_cache, scale, kv_cache_dtype) with kv_cache_dtype "fp8"
# (e4m3): a float32/float16/bfloat16 src is quantised into a uint8 dst holding e4m3 bytes,
# byte = e4m3(clamp(x / scale, -448, 448)); a uint8 src of e4m3 bytes is dequantised into a
# float dst, dst = float(e4m3) * scale rounded to dst's dtype. Elementwise over the cache.
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
def _convert_kernel(dst_ptr, src_ptr, scale, n, QUANTIZE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if QUANTIZE:
        x = tl.load(src_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        q = _round_to_e4m3(x / scale).to(tl.float8e4nv)
        tl.store(dst_ptr + offsets, q.to(tl.uint8, bitcast=True), mask=mask)
    else:
        byte = tl.load(src_ptr + offsets, mask=mask, other=0)
        value = byte.to(tl.float8e4nv, bitcast=True).to(tl.float32) * scale
        tl.store(dst_ptr + offsets, value.to(dst_ptr.dtype.element_ty), mask=mask)


def kernel(dst_cache: torch.Tensor, src_cache: torch.Tensor, scale: float,
           kv_cache_dtype: str) -> None:
    n = src_cache.numel()
    if n == 0:
        return None
    _convert_kernel[(triton.cdiv(n, 1024),)](dst_cache, src_cache.contiguous(), float(scale), n,
                                             QUANTIZE=dst_cache.dtype == torch.uint8,
                                             BLOCK=1024)
    return None
