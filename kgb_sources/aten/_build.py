"""Helpers shared by the ATen operator families: spec construction, kernel files, counts."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import FLOAT_DTYPES, InputContext, OperatorSpec, ShapeCase, Tolerance

SOURCE = "aten"
KERNELS = Path(__file__).parent / "kernels"
# bfloat16 is checked on GPUs only: the CPU backend skips it (see kgb_backends/cpu.py).
FLOATS = FLOAT_DTYPES


@lru_cache(maxsize=None)
def kernel_file(name: str) -> str:
    """The text of a shipped reference kernel, ``kernels/<name>.py``."""
    return (KERNELS / f"{name}.py").read_text()


def from_template(template: str, **fields: str) -> Callable[[], str]:
    """A reference kernel made by filling ``kernels/<template>.py``'s ``__FIELD__`` markers.

    Families of ops that differ only in one expression (unary math, binary arithmetic) share
    one template, so a fix to the template fixes every op made from it.
    """

    def render() -> str:
        text = kernel_file(template)
        for key, value in fields.items():
            marker = f"__{key.upper()}__"
            if marker not in text:
                raise KeyError(f"template {template} has no {marker}")
            text = text.replace(marker, value)
        return text

    return render


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def aten_op(name: str, *, signature: str, description: str,
            reference: Callable[..., Any], make_inputs: Callable[[InputContext], Sequence[Any]],
            cases: Sequence[ShapeCase], flops: Callable[[Mapping[str, Any]], float],
            bytes_moved: Callable[[Mapping[str, Any], int], float],
            dtypes: Sequence[str] = FLOATS, tags: Sequence[str] = (),
            reduce_dim: Callable[[Mapping[str, Any]], int] | None = None,
            tolerance_overrides: Mapping[str, Tolerance] | None = None,
            mutated_args: Sequence[int] = (),
            reference_kernel: Callable[[], str] | None = None,
            baseline: Callable[..., Any] | None = None,
            compared: Callable[[Any, Sequence[Any]], Any] | None = None,
            case_rtol: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None,
            product_bound: bool | str = False,
            rounding_bound: Callable[[Sequence[Any], Tolerance], Any] | None = None,
            ) -> OperatorSpec:
    extra: dict[str, Any] = {}
    if reduce_dim is not None:
        extra["reduce_dim"] = reduce_dim
    if case_rtol:
        extra["case_rtol"] = dict(case_rtol)
    return OperatorSpec(
        source=SOURCE, name=name, signature=signature, description=description,
        reference=reference, make_inputs=make_inputs, cases=tuple(cases), dtypes=tuple(dtypes),
        flops=flops, bytes_moved=bytes_moved, tags=frozenset(tags),
        tolerance_overrides=dict(tolerance_overrides or {}), mutated_args=tuple(mutated_args),
        reference_kernel=reference_kernel or (lambda: kernel_file(name)),
        baseline=baseline, compared=compared, product_bound=product_bound,
        rounding_bound=rounding_bound, **extra,
    )


def in_fp32(call: Callable[..., Any]) -> Callable[..., Any]:
    """call on fp32 copies of fp16/bf16 tensors, its result rounded once to the first
    argument's dtype: the rule the kernels are held to (fp32 accumulation, one rounding at the
    store), where the native half-precision call rounds intermediates (torch's CPU reductions,
    cuDNN's conv before its bias); each user says why in its spec. fp32 passes straight."""
    def wrapped(x, *args):  # noqa: ANN001, ANN002, ANN202
        import torch

        if x.dtype in (torch.float16, torch.bfloat16):
            args = tuple(a.float() if isinstance(a, torch.Tensor) else a for a in args)
            return call(x.float(), *args).to(x.dtype)
        return call(x, *args)

    wrapped.__name__ = f"{call.__name__}_fp32"
    return wrapped
