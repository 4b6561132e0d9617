# vLLM per_token_group_fp8_quant(input, output_q, output_s, group_size, eps, fp8_min, fp8_max,
# scale_ue8m0): each row of input [tokens, hidden] is cut into groups of group_size columns;
# per group, y_s = max(eps, max|x|) / fp8_max, rounded up to a power of two when scale_ue8m0;
# output_s[token, group] = y_s (output_s may be column-major: its strides are honoured), and
# output_q = fp8(clamp(x / y_s, fp8_min, fp8_max)). One program per (token, group).
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
def _group_quant_kernel(in_ptr, q_ptr, s_ptr, hidden, s_stride_row, s_stride_group, eps,
                        fp8_min, fp8_max, UE8M0: tl.constexpr, GROUP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    group = tl.program_id(1).to(tl.int64)
    offsets = row * hidden + group * GROUP + tl.arange(0, GROUP)
    x = tl.load(in_ptr + offsets).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x), axis=0), eps)
    y_s = absmax / fp8_max
    if UE8M0:
        # 2^ceil(log2(max(y_s, 1e-10))) from the bits: bump the exponent if any mantissa bit.
        bits = tl.maximum(y_s, 1e-10).to(tl.int32, bitcast=True)
        exponent = (bits >> 23) & 0xFF
        exponent = exponent + tl.where((bits & 0x7FFFFF) != 0, 1, 0)
        y_s = (exponent << 23).to(tl.float32, bitcast=True)
    tl.store(s_ptr + row * s_stride_row + group * s_stride_group, y_s)
    q = tl.minimum(tl.maximum(x / y_s, fp8_min), fp8_max)
    tl.store(q_ptr + offsets, _round_to_e4m3(q).to(q_ptr.dtype.element_ty))


def kernel(input: torch.Tensor, output_q: torch.Tensor, output_s: torch.Tensor, group_size: int,
           eps: float, fp8_min: float, fp8_max: float, scale_ue8m0: bool) -> None:
    hidden = input.shape[-1]
    rows = input.numel() // hidden
    if rows == 0:
        return None
    _group_quant_kernel[(rows, hidden // group_size)](
        input.contiguous(), output_q, output_s, hidden, output_s.stride(0), output_s.stride(1),
        float(eps), float(fp8_min), float(fp8_max), UE8M0=bool(scale_ue8m0), GROUP=group_size)
    return None
