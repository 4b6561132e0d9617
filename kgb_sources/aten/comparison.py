"""Comparisons (eq, ne, gt, ge, lt, le) and logical ops (logical_and, logical_or, logical_not),
all with bool outputs compared exactly.

Operands are drawn from a small set of values ({-1.5, ..., 1.5}, or -3..3 for int32), so
equal elements are frequent and ``a >= b`` differs from ``a > b`` on many positions; the
Scalar overloads get a Python scalar that the operands often equal (1, or 0.5). A scalar is
rounded to the common dtype before comparing, as ATen does.
"""

from __future__ import annotations

from typing import Any, Callable

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import FLOATS, aten_op, numel
from kgb_sources.aten._elementwise import (
    BOOL_BINARY_WRAPPER, broadcast_shape, elementwise_kernel, operand_b, tensor,
    ties,
)

COMPARISON_CASES = (
    ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
    ShapeCase("row_broadcast", {"a": (33, 65), "b": (65,)}),
    ShapeCase("scalar_int_other", {"a": (3, 17, 40), "scalar": 1}),
    ShapeCase("transposed_scalar_float_other", {"a": (40, 24), "scalar": 0.5,
                                                "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_broadcast", {"a": (2, 7, 11, 13), "b": (7, 1, 13)}, heldout=True),
    ShapeCase("llm_pairs", {"a": (8192, 4096), "b": (8192, 4096)}, tier=LARGE),
    ShapeCase("threshold_scalar", {"a": (16, 1024, 4096), "scalar": 0.5}, tier=LARGE),
)

# name: (Triton comparison of x0 and x1, meaning)
COMPARISONS = {
    "eq": ("x0 == x1", "a == b"),
    "ne": ("x0 != x1", "a != b"),
    "gt": ("x0 > x1", "a > b"),
    "ge": ("x0 >= x1", "a >= b"),
    "lt": ("x0 < x1", "a < b"),
    "le": ("x0 <= x1", "a <= b"),
}


def _comparison_inputs(ctx: InputContext) -> list[Any]:
    draw = lambda *shape: ties(ctx, *shape)  # noqa: E731
    a = tensor(ctx, ctx.params["a"], draw, ctx.params.get("transposed", False))
    return [a, operand_b(ctx, draw)]


def _torch(name: str) -> Callable[..., Any]:
    def call(*args):  # noqa: ANN002, ANN202
        import torch

        return getattr(torch, name)(*args)

    call.__name__ = f"torch_{name}"
    return call


def _out_shape(p) -> tuple[int, ...]:  # noqa: ANN001
    return broadcast_shape(p["a"], p.get("b", ()))


def _bool_bytes(p, size: int) -> float:  # noqa: ANN001
    return (numel(p["a"]) + numel(p.get("b", ()))) * size + numel(_out_shape(p))


def _comparison_spec(name: str, expr: str, meaning: str) -> OperatorSpec:
    return aten_op(
        name,
        signature="kernel(a: Tensor, b: Tensor | int | float) -> Tensor",
        description=f"torch.{name}(a, b): the elementwise comparison {meaning}, as a new "
                    "contiguous bool tensor of the broadcast shape. b is a tensor of a's dtype "
                    f"({name}.Tensor, broadcast with a) or a Python int or float "
                    f"({name}.Scalar, converted to the common dtype of a and b first, as ATen "
                    "does). Values are compared exactly (equal values are frequent in the "
                    "inputs). a may be non-contiguous.",
        reference=_torch(name),
        make_inputs=_comparison_inputs,
        cases=COMPARISON_CASES,
        dtypes=FLOATS + ("int32",),
        flops=lambda p: numel(_out_shape(p)),
        bytes_moved=_bool_bytes,
        tags=("pointwise", "elementwise", "comparison", "broadcast"),
        reference_kernel=elementwise_kernel(expr, BOOL_BINARY_WRAPPER),
    )


LOGICAL_CASES = (
    ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
    ShapeCase("row_broadcast", {"a": (33, 65), "b": (65,)}),
    ShapeCase("column_broadcast_3d", {"a": (3, 17, 40), "b": (17, 1)}),
    ShapeCase("transposed", {"a": (40, 24), "b": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_broadcast", {"a": (2, 7, 11, 13), "b": (7, 1, 13)}, heldout=True),
    ShapeCase("llm_masks", {"a": (8192, 4096), "b": (8192, 4096)}, tier=LARGE),
)

LOGICAL_NOT_CASES = (
    ShapeCase("odd_2d", {"a": (37, 129)}),
    ShapeCase("prime_1d", {"a": (1999,)}),
    ShapeCase("odd_3d", {"a": (3, 17, 40)}),
    ShapeCase("transposed", {"a": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"a": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_mask", {"a": (8192, 4096)}, tier=LARGE),
)


def _logical_values(ctx: InputContext, *shape: int) -> Any:
    """About a third zeros (False), the rest nonzero of either sign (True)."""
    torch = ctx.torch
    if ctx.dtype == torch.bool:
        return ctx.randint(*shape, low=0, high=3, dtype=torch.int64).ne(0)
    steps = ctx.randint(*shape, low=-1, high=2)
    return (steps.to(torch.float32) * 0.5).to(ctx.dtype)


def _logical_inputs(ctx: InputContext) -> list[Any]:
    draw = lambda *shape: _logical_values(ctx, *shape)  # noqa: E731
    a = tensor(ctx, ctx.params["a"], draw, ctx.params.get("transposed", False))
    if "b" not in ctx.params:
        return [a]
    return [a, draw(*ctx.params["b"])]


LOGICAL_DTYPES = FLOATS + ("bool",)

LOGICAL = {
    "logical_and": ("(x0 != 0) & (x1 != 0)", "a and b"),
    "logical_or": ("(x0 != 0) | (x1 != 0)", "a or b"),
}


def _logical_spec(name: str, expr: str, meaning: str) -> OperatorSpec:
    return aten_op(
        name,
        signature="kernel(a: Tensor, b: Tensor) -> Tensor",
        description=f"torch.{name}(a, b): elementwise {meaning}, where an element is True when "
                    "it is nonzero; a and b have the same dtype (float or bool) and broadcast; "
                    "the output is a new contiguous bool tensor. a may be non-contiguous.",
        reference=_torch(name),
        make_inputs=_logical_inputs,
        cases=LOGICAL_CASES,
        dtypes=LOGICAL_DTYPES,
        flops=lambda p: numel(_out_shape(p)),
        bytes_moved=_bool_bytes,
        tags=("pointwise", "elementwise", "logical", "broadcast"),
        reference_kernel=elementwise_kernel(expr, BOOL_BINARY_WRAPPER),
    )


def operators() -> list[OperatorSpec]:
    specs = [_comparison_spec(name, *row) for name, row in COMPARISONS.items()]
    specs += [_logical_spec(name, *row) for name, row in LOGICAL.items()]
    specs.append(aten_op(
        "logical_not",
        signature="kernel(x: Tensor) -> Tensor",
        description="torch.logical_not(x): True where x is zero, False where it is nonzero "
                    "(NaN counts as nonzero); x is float or bool; the output is a new "
                    "contiguous bool tensor of x's shape. x may be non-contiguous.",
        reference=_torch("logical_not"),
        make_inputs=_logical_inputs,
        cases=LOGICAL_NOT_CASES,
        dtypes=LOGICAL_DTYPES,
        flops=lambda p: numel(p["a"]),
        bytes_moved=lambda p, size: numel(p["a"]) * (size + 1),
        tags=("pointwise", "elementwise", "logical"),
        reference_kernel=elementwise_kernel("x0 == 0", """
            def kernel(x):
                out = torch.empty(x.shape, dtype=torch.bool, device=x.device)
                return _elementwise(out, [x], compute_float=x.is_floating_point())
        """),
    ))
    return specs
