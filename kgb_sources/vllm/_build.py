"""Helpers shared by the vLLM operator families: spec construction and kernel files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import FLOAT_DTYPES, InputContext, OperatorSpec, ShapeCase, Tolerance

SOURCE = "vllm"
KERNELS = Path(__file__).parent / "kernels"
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


@lru_cache(maxsize=None)
def kernel_file(name: str) -> str:
    """The text of a shipped reference kernel, ``kernels/<name>.py``."""
    return (KERNELS / f"{name}.py").read_text()


def vllm_op(name: str, *, signature: str, description: str,
            reference: Callable[..., Any], make_inputs: Callable[[InputContext], Sequence[Any]],
            cases: Sequence[ShapeCase], flops: Callable[[Mapping[str, Any]], float],
            bytes_moved: Callable[[Mapping[str, Any], int], float],
            dtypes: Sequence[str] = FLOATS, tags: Sequence[str] = (),
            mutated_args: Sequence[int] = (),
            reduce_dim: Callable[[Mapping[str, Any]], int] | None = None,
            tolerance_overrides: Mapping[str, Tolerance] | None = None,
            compared: Callable[[Any, Sequence[Any]], Any] | None = None,
            reference_kernel: Callable[[], str] | None = None,
            baseline: Callable[..., Any] | None = None,
            vllm_callable: str | None = None) -> OperatorSpec:
    if vllm_callable is not None:
        VLLM_CALLABLES[name] = vllm_callable
    extra: dict[str, Any] = {}
    if reduce_dim is not None:
        extra["reduce_dim"] = reduce_dim
    return OperatorSpec(
        source=SOURCE, name=name, signature=signature, description=description,
        reference=reference, make_inputs=make_inputs, cases=tuple(cases), dtypes=tuple(dtypes),
        flops=flops, bytes_moved=bytes_moved, tags=frozenset(tags),
        tolerance_overrides=dict(tolerance_overrides or {}), mutated_args=tuple(mutated_args),
        reference_kernel=reference_kernel or (lambda: kernel_file(name)),
        baseline=baseline, compared=compared,
        **extra,
    )
