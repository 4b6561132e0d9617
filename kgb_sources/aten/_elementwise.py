"""Helpers shared by the elementwise families beyond add/sub/mul/div (arithmetic, comparison,
creation, copies): the ``elementwise`` kernel template, shape cases and input draws.

Every op made here renders ``kernels/elementwise.py`` with its own expression and its own
``kernel(...)`` wrapper (a few lines that allocate the output, or take it for in-place ops),
so a fix to the strided load/store logic fixes every one of them.
"""

from __future__ import annotations

import textwrap
from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, ShapeCase

from kgb_sources.aten._build import from_template, numel

INTS = ("int32", "int64")


def elementwise_kernel(expr: str, wrapper: str, helpers: str = "") -> Callable[[], str]:
    """The reference kernel: the elementwise template with ``expr`` (of x0, x1, x2, p0, p1),
    ``wrapper`` (the op's ``def kernel``) and optional @triton.jit ``helpers``."""
    return from_template("elementwise", expr=expr,
                         wrapper=textwrap.dedent(wrapper).strip() + "\n",
                         helpers=textwrap.dedent(helpers).strip() + "\n")


# kernel(a, b) for a new output of the broadcast shape and the promoted dtype; b may be a
# Python scalar (the .Scalar overload).
BINARY_WRAPPER = """
def kernel(a, b):
    b = _as_tensor(b, a)
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out = torch.empty(shape, dtype=torch.result_type(a, b), device=a.device)
    return _elementwise(out, [a, b], compute_float=_floating(a, b))
"""

# The same with a bool output (comparisons, logical ops).
BOOL_BINARY_WRAPPER = """
def kernel(a, b):
    b = _as_tensor(b, a)
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out = torch.empty(shape, dtype=torch.bool, device=a.device)
    return _elementwise(out, [a, b], compute_float=_floating(a, b))
"""


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    return tuple(max(sizes) for sizes in zip(*padded))


def is_integral(dtype_name: str) -> bool:
    return dtype_name.startswith(("int", "uint")) or dtype_name == "bool"


def tensor(ctx: InputContext, shape: Sequence[int], draw: Callable[..., Any],
           transposed: bool = False) -> Any:
    """``draw(*shape)``; with ``transposed`` (2-D), the ``.t()`` view of a tensor of the reversed
    shape, so its strides are column-major and a kernel must use them."""
    shape = tuple(shape)
    if transposed:
        return draw(*shape[::-1]).t()
    return draw(*shape)


def with_nans(ctx: InputContext, x: Any, fraction: float = 0.2) -> Any:
    """x with about ``fraction`` of its elements replaced by NaN (seeded), in x's layout (a
    transposed x stays a transposed view)."""
    torch = ctx.torch
    hit = ctx.uniform(*x.shape, low=0.0, high=1.0, dtype=torch.float32) < fraction
    return like_layout(torch.where(hit.to(x.device), torch.full_like(x, float("nan")), x), x)


def like_layout(values: Any, layout: Any) -> Any:
    """``values`` (a new contiguous tensor) laid out as ``layout`` is where that is a transposed
    view of its last two dims: the same values, the strides a kernel must honour."""
    if layout.dim() >= 2 and not layout.is_contiguous() and layout.mT.is_contiguous():
        return values.mT.contiguous().mT
    return values


def ties(ctx: InputContext, *shape: int, dtype: Any = None) -> Any:
    """Values from the small set {-1.5, -1, ..., 1.5} (integers -3..3 for integral dtypes), so
    that equal elements, and elements equal to a scalar 1 or 0.5, are common."""
    dtype = dtype or ctx.dtype
    steps = ctx.randint(*shape, low=-3, high=4)
    if dtype.is_floating_point:
        return (steps.to(ctx.torch.float32) * 0.5).to(dtype)
    return steps.to(dtype)


def away_from_zero(ctx: InputContext, *shape: int) -> Any:
    """Divisors: magnitude in [0.5, 2) (1..7 for integral dtypes), random sign."""
    torch = ctx.torch
    sign = ctx.randint(*shape, low=0, high=2) * 2 - 1
    if ctx.dtype.is_floating_point:
        magnitude = ctx.uniform(*shape, low=0.5, high=2.0, dtype=torch.float32)
        return (magnitude * sign.to(torch.float32)).to(ctx.dtype)
    return (ctx.randint(*shape, low=1, high=8) * sign).to(ctx.dtype)


def binary_cases(large: bool = True) -> tuple[ShapeCase, ...]:
    """Operands "a" and "b" (b may broadcast into a), a transposed a, a held-out 4-D case."""
    cases = [
        ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
        ShapeCase("row_broadcast", {"a": (33, 65), "b": (65,)}),
        ShapeCase("column_broadcast_3d", {"a": (3, 17, 40), "b": (17, 1)}),
        ShapeCase("transposed", {"a": (40, 24), "b": (40, 24), "transposed": True}),
        # Held out: checked, never shown (see ShapeCase.heldout).
        ShapeCase("heldout_4d_broadcast", {"a": (2, 7, 11, 13), "b": (7, 1, 13)}, heldout=True),
    ]
    if large:
        cases += [
            ShapeCase("llm_residual", {"a": (8192, 4096), "b": (8192, 4096)}, tier=LARGE),
            ShapeCase("bias_broadcast", {"a": (16, 1024, 4096), "b": (4096,)}, tier=LARGE),
        ]
    return tuple(cases)


def binary_flops(p: Mapping[str, Any], per_element: int = 1) -> float:
    return per_element * numel(broadcast_shape(p["a"], p["b"]))


def binary_bytes(p: Mapping[str, Any], size: int, out_size: int | None = None) -> float:
    out = numel(broadcast_shape(p["a"], p["b"]))
    return (numel(p["a"]) + numel(p["b"])) * size + out * (size if out_size is None else out_size)


def operand_b(ctx: InputContext, draw: Callable[..., Any]) -> Any:
    """The second operand: a tensor of shape ``b``, or the case's Python ``scalar``."""
    if "scalar" in ctx.params:
        return ctx.params["scalar"]
    return draw(*ctx.params["b"])
