# vLLM ggml_dequantize(W, quant_type, m, n, dtype): W uint8 [m, n / 32 * block_bytes] holds
# GGML blocks of 32 values (little-endian): Q4_0 (2) fp16 d + 16 nibble bytes, value =
# (nibble - 8) * d, low nibbles first then high; Q4_1 (3) d, m + nibbles, value = q * d + m;
# Q5_0 (6) d + uint32 qh (fifth bits) + nibbles, value = (q - 16) * d; Q5_1 (7) d, m, qh,
# nibbles, value = q * d + m; Q8_0 (8) d + 32 int8, value = q * d. float32 math, one
# rounding to the output dtype. One program per block of 32 values.
import torch
import triton
import triton.language as tl


@triton.jit
def _half_at(ptr):
    lo = tl.load(ptr).to(tl.int32)
    hi = tl.load(ptr + 1).to(tl.int32)
    return (lo | (hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)


@triton.jit
def _ggml_kernel(w_ptr, out_ptr, TYPE: tl.constexpr, BLOCK_BYTES: tl.constexpr):
    block = tl.program_id(0).to(tl.int64)
    base = w_ptr + block * BLOCK_BYTES
    j = tl.arange(0, 32)
    d = _half_at(base)
    if TYPE == 8:  # Q8_0
        q = tl.load(base + 2 + j).to(tl.int8, bitcast=True).to(tl.float32)
        value = q * d
    else:
        if (TYPE == 3) | (TYPE == 7):
            mins = _half_at(base + 2)
            qs_at = 4
        else:
            mins = 0.0
            qs_at = 2
        if (TYPE == 6) | (TYPE == 7):
            qh = (tl.load(base + qs_at) .to(tl.int32)
                  | (tl.load(base + qs_at + 1).to(tl.int32) << 8)
                  | (tl.load(base + qs_at + 2).to(tl.int32) << 16)
                  | (tl.load(base + qs_at + 3).to(tl.int32) << 24))
            qs_at += 4
        byte = tl.load(base + qs_at + (j % 16)).to(tl.int32)
        q = tl.where(j < 16, byte & 0xF, byte >> 4)
        if (TYPE == 6) | (TYPE == 7):
            q = q | (((qh >> j) & 1) << 4)
        qf = q.to(tl.float32)
        if TYPE == 2:
            value = (qf - 8.0) * d
        elif TYPE == 6:
            value = (qf - 16.0) * d
        else:
            value = qf * d + mins
    tl.store(out_ptr + block * 32 + j, value.to(out_ptr.dtype.element_ty))


_BLOCK_BYTES = {2: 18, 3: 20, 6: 22, 7: 24, 8: 34}


def kernel(W, quant_type, m, n, dtype):  # noqa: N803, ANN001, ANN201
    out = torch.empty((m, n), dtype=dtype if dtype is not None else torch.float16,
                      device=W.device)
    _ggml_kernel[(m * n // 32,)](W, out, TYPE=int(quant_type),
                                 BLOCK_BYTES=_BLOCK_BYTES[int(quant_type)])
    return out
