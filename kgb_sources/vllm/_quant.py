"""Quantisation rules shared by the norm and quant families: vLLM's fp8 (e4m3fn on NVIDIA) and
int8 conversions, and how their outputs are compared.

fp8 outputs are compared as values (``float8 -> float32``, the quantised value before the scale
multiplies it back) within one e4m3 step, since where two correct kernels compute x / scale
one fp32 ulp apart (Triton's fp32 division on NVIDIA is not IEEE-rounded) the nearest e4m3
value can differ by one step. Scales are compared at their own tolerance. On a GPU the
conversion is exact; Triton's CPU interpreter rounds fp32 -> float8e4nv wrongly (it drops the
carry of a rounded-up mantissa into the exponent: 127.5 becomes 64), so a kernel must round to
the e4m3 grid in fp32 itself before the cast, which then is exact everywhere.
"""

from __future__ import annotations

from typing import Any

from kgb_core.operators import Tolerance, WithTolerance

FP8_MAX = 448.0  # torch.finfo(torch.float8_e4m3fn).max, vLLM's quant_type_max on NVIDIA
# vLLM's min_scaling_factor<c10::Float8_e4m3fn>: 1 / (448 * 512), computed in fp32.
FP8_MIN_SCALE = 1.0 / (FP8_MAX * 512.0)
INT8_MAX = 127.0
# vLLM's min_scaling_factor<int8_t>: std::numeric_limits<float>::epsilon() (2^-23).
INT8_MIN_SCALE = 2.0 ** -23
# One e4m3 step: the grid spacing is 2^(e-3) in the binade [2^e, 2^(e+1)), at most 1/8 of the
# value, and 2^-9 among the subnormals.
ONE_E4M3_STEP = Tolerance(rtol=0.125, atol=2.0 ** -9)
# One int8 step: x / scale rounded to the nearest integer moves by one where the fp32 quotient
# of two correct kernels differs by an ulp across a .5 boundary.
ONE_INT8_STEP = Tolerance(rtol=0.0, atol=1.0)
EXACT = Tolerance(rtol=0.0, atol=0.0)
SCALE_FP32 = Tolerance(rtol=1e-5, atol=0.0)

FP8_RULE = ("fp8 is torch.float8_e4m3fn (max 448): clamp to [-448, 448], then round to the "
            "nearest e4m3 value, ties to even (exact on a GPU's cvt instruction; in Triton's "
            "CPU interpreter the fp32 -> float8e4nv cast itself rounds wrongly, so round to the "
            "e4m3 grid in fp32 first: step 2^(floor(log2|v|) - 3), 2^-9 below 2^-6, and cast "
            "the rounded value). fp8 values are compared within one e4m3 step.")
INT8_RULE = ("int8 values are rounded to the nearest integer with ties to even (CUDA's "
             "cvt.rni.sat.s8.f32) and saturated to [-128, 127].")


def to_fp8(values):  # noqa: ANN001, ANN201 - fp32 tensor -> float8_e4m3fn, vLLM's rule
    import torch

    return values.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def to_int8(values):  # noqa: ANN001, ANN201 - fp32 tensor -> int8, round half to even, saturate
    import torch

    return torch.round(values).clamp(-128.0, 127.0).to(torch.int8)


def quantized_values(tensor: Any, tolerance: Tolerance | None = None) -> WithTolerance:
    """An fp8 or int8 output as float32 values, at one step of its grid unless told."""
    import torch

    if tensor.dtype == torch.int8:
        return WithTolerance(tensor.float(), tolerance or ONE_INT8_STEP)
    return WithTolerance(tensor.float(), tolerance or ONE_E4M3_STEP)


def is_power_of_two(value: float) -> bool:
    import math

    mantissa, _ = math.frexp(value)
    return value > 0 and mantissa == 0.5
