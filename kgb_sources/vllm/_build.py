"""Helpers shared by the vLLM operator families: spec construction and kernel files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgb_core.operators import FLOAT_DTYPES, OperatorSpec, Tolerance
from kgb_core.source_kit import KernelFiles, spec_factory

SOURCE = "vllm"
KERNELS = KernelFiles(Path(__file__).parent / "kernels")
# vLLM serves in fp16/bf16 and checks fp32 as well; bf16 is skipped on the CPU backend.
FLOATS = FLOAT_DTYPES

# fp16 for operators whose vLLM kernel rounds an intermediate to the storage dtype and then
# computes on (the gated activation before its product, x * rstd before the weight): a correct
# kernel's float32 math (GPU exp and rsqrt approximations, another summation order) moves that
# intermediate across a rounding boundary now and then, and one fp16 ulp there plus the final
# rounding is up to 2^-9 = 1.95e-3 relative, past the default 1e-3 (on the H200, 59 of 16.7M
# rms_norm outputs, at most 1.86e-3). bf16's default 1.6e-2 already holds two of its ulps.
ROUNDED_INTERMEDIATE = {"float16": Tolerance(rtol=2e-3, atol=1e-4)}

# Operator name -> the dotted path of vLLM's own callable (``vllm._custom_ops.rms_norm``), taking
# the same arguments as the spec's reference: where vllm is importable, the reference can be
# checked against it on the same inputs.
VLLM_CALLABLES: dict[str, str] = {}


kernel_file = KERNELS.text  # the text of a shipped reference kernel, kernels/<name>.py
from_template = KERNELS.template  # kernels/<template>.py with its __FIELD__ markers filled
_spec = spec_factory(SOURCE, KERNELS, dtypes=FLOATS)


def vllm_op(name: str, *, vllm_callable: str | None = None, **fields: Any) -> OperatorSpec:
    """A vLLM spec (OperatorSpec's fields); ``vllm_callable`` names vLLM's own op, which the
    cross-check runs against the reference where vllm imports."""
    if vllm_callable is not None:
        VLLM_CALLABLES[name] = vllm_callable
    return _spec(name, **fields)
