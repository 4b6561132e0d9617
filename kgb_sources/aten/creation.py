"""Tensor creation and fills: zeros, full, arange, scalar_tensor (no tensor inputs: sizes,
values, a dtype and the device), zeros_like, ones_like, new_ones (shaped after a tensor), and
the in-place fill_ and zero_ (on possibly non-contiguous tensors).

Every kernel allocates with torch.empty* and writes every element with a Triton kernel (the
``elementwise`` template with no operands). An output left unwritten is caught even where the
right answer is zeros: the CPU backend fills every allocation with 0xFE bytes (MALLOC_PERTURB_,
kgb_backends/cpu.py), and the in-place ops start from random values.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import FLOATS, aten_op, numel
from kgb_sources.aten._elementwise import INTS, elementwise_kernel, tensor

CREATION_DTYPES = FLOATS + INTS

# Every element gets p0, converted to the output dtype (a float value truncates toward zero
# for integer outputs, as ATen's fill does).
FILL_EXPR = "p0 + tl.zeros((BLOCK,), out_ptr.dtype.element_ty)"

SIZE_CASES = (
    ShapeCase("odd_2d", {"size": (37, 129)}),
    ShapeCase("prime_1d", {"size": (1999,)}),
    ShapeCase("odd_3d", {"size": (3, 17, 40)}),
    ShapeCase("zero_dim", {"size": ()}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"size": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"size": (8192, 4096)}, tier=LARGE),
    ShapeCase("activations_3d", {"size": (16, 1024, 4096)}, tier=LARGE),
)

FULL_CASES = (
    ShapeCase("odd_2d", {"size": (37, 129), "fill_value": 3.25}),
    ShapeCase("prime_1d_negative", {"size": (1999,), "fill_value": -2.75}),
    ShapeCase("odd_3d_int_value", {"size": (3, 17, 40), "fill_value": 7}),
    ShapeCase("zero_dim_inexact", {"size": (), "fill_value": -0.1}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"size": (2, 7, 11, 13), "fill_value": 1.5}, heldout=True),
    ShapeCase("llm_hidden", {"size": (8192, 4096), "fill_value": -0.5}, tier=LARGE),
)

SCALAR_CASES = (
    ShapeCase("fraction", {"value": 2.5}),
    ShapeCase("negative_int", {"value": -7}),
    ShapeCase("inexact", {"value": 0.3}),
    ShapeCase("large", {"value": 1000.75}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_negative_fraction", {"value": -3.75}, heldout=True),
    # A 0-d tensor has no large size; this case is what a GPU times (launch cost).
    ShapeCase("timed", {"value": 1.25}, tier=LARGE),
)

# *_like and in-place fills: x's shape, and "layout": contiguous, transposed (2-D, dense but
# column-major) or sliced (every other column: not dense, so strides are what a kernel must use).
LIKE_CASES = (
    ShapeCase("odd_2d", {"x": (37, 129)}),
    ShapeCase("transposed", {"x": (40, 24), "layout": "transposed"}),
    ShapeCase("sliced_columns", {"x": (33, 65), "layout": "sliced"}),
    ShapeCase("odd_3d", {"x": (3, 17, 40)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"x": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"x": (8192, 4096)}, tier=LARGE),
    ShapeCase("activations_transposed", {"x": (4096, 4096), "layout": "transposed"}, tier=LARGE),
)

FILL_CASES = tuple(
    ShapeCase(case.name, {**case.params, "value": value}, tier=case.tier, heldout=case.heldout)
    for case, value in zip(LIKE_CASES, (3.25, -2.75, 7, 0.3, -1.5, 1.0, 2.0))
)

NEW_ONES_CASES = (
    ShapeCase("odd_2d", {"x": (5, 7), "size": (37, 129)}),
    ShapeCase("prime_1d", {"x": (37, 129), "size": (1999,)}),
    ShapeCase("from_transposed_3d", {"x": (40, 24), "layout": "transposed",
                                     "size": (3, 17, 40)}),
    ShapeCase("zero_dim", {"x": (11,), "size": ()}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"x": (3, 3), "size": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"x": (16,), "size": (8192, 4096)}, tier=LARGE),
)

# arange: (start, end, step) for float dtypes and for integer dtypes; the length is
# ceil((end - start) / step) in double precision (ATen's RangeFactories.cpp).
ARANGE_CASES = (
    ShapeCase("fractional_step", {"float": (0.5, 40.3, 0.7), "int": (-7, 100, 3)}),
    ShapeCase("negative_step", {"float": (10.0, -3.5, -0.7), "int": (50, -13, -4)}),
    ShapeCase("tenths", {"float": (0.0, 1.0, 0.1), "int": (0, 10, 1)}),
    ShapeCase("long", {"float": (-100.25, 1900.0, 1.0), "int": (-1000, 1000, 1)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_offset", {"float": (-3.25, 77.5, 0.75), "int": (7, 1000, 9)},
              heldout=True),
    ShapeCase("positions", {"float": (0.0, 8388608.0, 1.0), "int": (0, 16777216, 1)},
              tier=LARGE),
)

ARANGE_HELPERS = """
@triton.jit
def _arange_value(index, start, step, FLOAT: tl.constexpr):
    if FLOAT:
        value = start + index.to(tl.float32) * step
    else:
        value = start + index.to(tl.int64) * step
    return value
"""


def _draw(ctx: InputContext, *shape: int) -> Any:
    if ctx.dtype.is_floating_point:
        return ctx.randn(*shape)
    return ctx.randint(*shape, low=-100, high=100, dtype=ctx.dtype)


def _like_tensor(ctx: InputContext) -> Any:
    """x of the case's shape, laid out as the case says."""
    shape = tuple(ctx.params["x"])
    layout = ctx.params.get("layout", "contiguous")
    if layout == "sliced":
        return _draw(ctx, shape[0], 2 * shape[1])[:, ::2]
    draw = lambda *s: _draw(ctx, *s)  # noqa: E731
    return tensor(ctx, shape, draw, transposed=layout == "transposed")


def _size_inputs(ctx: InputContext) -> list[Any]:
    return [tuple(ctx.params["size"]), ctx.dtype, ctx.device]


def _full_inputs(ctx: InputContext) -> list[Any]:
    return [tuple(ctx.params["size"]), ctx.params["fill_value"], ctx.dtype, ctx.device]


def _scalar_inputs(ctx: InputContext) -> list[Any]:
    return [ctx.params["value"], ctx.dtype, ctx.device]


def _arange_inputs(ctx: InputContext) -> list[Any]:
    start, end, step = ctx.params["float" if ctx.dtype.is_floating_point else "int"]
    return [start, end, step, ctx.dtype, ctx.device]


def _like_inputs(ctx: InputContext) -> list[Any]:
    return [_like_tensor(ctx)]


def _fill_inputs(ctx: InputContext) -> list[Any]:
    return [_like_tensor(ctx), ctx.params["value"]]


def _new_ones_inputs(ctx: InputContext) -> list[Any]:
    return [_like_tensor(ctx), tuple(ctx.params["size"])]


def _zeros_reference(size, dtype, device):  # noqa: ANN001, ANN202
    import torch

    return torch.zeros(size, dtype=dtype, device=device)


def _full_reference(size, fill_value, dtype, device):  # noqa: ANN001, ANN202
    import torch

    return torch.full(size, fill_value, dtype=dtype, device=device)


def _scalar_tensor_reference(value, dtype, device):  # noqa: ANN001, ANN202
    import torch

    return torch.scalar_tensor(value, dtype=dtype, device=device)


def _arange_reference(start, end, step, dtype, device):  # noqa: ANN001, ANN202
    import torch

    return torch.arange(start, end, step, dtype=dtype, device=device)


def _zeros_like_reference(x):  # noqa: ANN001, ANN202
    import torch

    return torch.zeros_like(x)


def _ones_like_reference(x):  # noqa: ANN001, ANN202
    import torch

    return torch.ones_like(x)


def _new_ones_reference(x, size):  # noqa: ANN001, ANN202
    return x.new_ones(size)


def _fill__reference(x, value):  # noqa: ANN001, ANN202
    return x.fill_(value)


def _zero__reference(x):  # noqa: ANN001, ANN202
    return x.zero_()


def _arange_length(p: Mapping[str, Any]) -> int:
    import math

    start, end, step = p["float"]
    return max(0, math.ceil((end - start) / step))


def _written(shape_key: str):  # noqa: ANN202
    return lambda p, size: numel(p[shape_key]) * size


def _no_flops(_p: Mapping[str, Any]) -> float:
    return 0.0


def operators() -> list[OperatorSpec]:
    dtypes_note = " Float and integer dtypes; a float value truncates toward zero for integer "\
                  "dtypes, as ATen's fill does."
    return [
        aten_op(
            "zeros",
            signature="kernel(size: tuple[int, ...], dtype: torch.dtype, device) -> Tensor",
            description="torch.zeros(size, dtype=dtype, device=device): a new contiguous tensor "
                        "of that shape (possibly () for a 0-d tensor) and dtype, every element "
                        "0. Allocate it (torch.empty) and write the zeros with a Triton kernel.",
            reference=_zeros_reference,
            make_inputs=_size_inputs,
            cases=SIZE_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("size"),
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(size, dtype, device):
                    out = torch.empty(size, dtype=dtype, device=device)
                    return _elementwise(out, [], 0)
            """),
        ),
        aten_op(
            "full",
            signature="kernel(size: tuple[int, ...], fill_value: float | int, "
                      "dtype: torch.dtype, device) -> Tensor",
            description="torch.full(size, fill_value, dtype=dtype, device=device): a new "
                        "contiguous tensor of that shape (possibly ()) with every element "
                        "fill_value converted to dtype." + dtypes_note,
            reference=_full_reference,
            make_inputs=_full_inputs,
            cases=FULL_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("size"),
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(size, fill_value, dtype, device):
                    out = torch.empty(size, dtype=dtype, device=device)
                    return _elementwise(out, [], fill_value)
            """),
        ),
        aten_op(
            "scalar_tensor",
            signature="kernel(value: float | int, dtype: torch.dtype, device) -> Tensor",
            description="torch.scalar_tensor(value, dtype=dtype, device=device): a new 0-d "
                        "tensor holding value converted to dtype." + dtypes_note,
            reference=_scalar_tensor_reference,
            make_inputs=_scalar_inputs,
            cases=SCALAR_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=lambda p, size: size,
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(value, dtype, device):
                    out = torch.empty((), dtype=dtype, device=device)
                    return _elementwise(out, [], value)
            """),
        ),
        aten_op(
            "arange",
            signature="kernel(start: float | int, end: float | int, step: float | int, "
                      "dtype: torch.dtype, device) -> Tensor",
            description="torch.arange(start, end, step, dtype=dtype, device=device): a new 1-D "
                        "tensor of length ceil((end - start) / step) (computed in double "
                        "precision, as ATen does; step may be negative) whose element i is "
                        "start + i * step (computed in fp32 for float dtypes, in integers for "
                        "integer dtypes, then converted to dtype). Integer dtypes get integer "
                        "start, end and step; float dtypes fractional ones.",
            reference=_arange_reference,
            make_inputs=_arange_inputs,
            cases=ARANGE_CASES,
            dtypes=CREATION_DTYPES,
            flops=lambda p: 2 * _arange_length(p),
            bytes_moved=lambda p, size: _arange_length(p) * size,
            tags=("creation", "range"),
            reference_kernel=elementwise_kernel("_arange_value(offsets, p0, p1, FLOAT)", """
                import math


                def kernel(start, end, step, dtype, device):
                    length = max(0, math.ceil((end - start) / step))
                    out = torch.empty(length, dtype=dtype, device=device)
                    return _elementwise(out, [], start, step, compute_float=dtype.is_floating_point)
            """, ARANGE_HELPERS),
        ),
        aten_op(
            "zeros_like",
            signature="kernel(x: Tensor) -> Tensor",
            description="torch.zeros_like(x): a new tensor of x's shape, dtype and device, every "
                        "element 0 (memory_format=preserve_format: a dense x's strides are kept, "
                        "torch.empty_like does that). x may be non-contiguous; its values are "
                        "not read.",
            reference=_zeros_like_reference,
            make_inputs=_like_inputs,
            cases=LIKE_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("x"),
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(x):
                    return _elementwise(torch.empty_like(x), [], 0)
            """),
        ),
        aten_op(
            "ones_like",
            signature="kernel(x: Tensor) -> Tensor",
            description="torch.ones_like(x): a new tensor of x's shape, dtype and device, every "
                        "element 1 (preserve_format, as torch.empty_like). x may be "
                        "non-contiguous; its values are not read.",
            reference=_ones_like_reference,
            make_inputs=_like_inputs,
            cases=LIKE_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("x"),
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(x):
                    return _elementwise(torch.empty_like(x), [], 1)
            """),
        ),
        aten_op(
            "new_ones",
            signature="kernel(x: Tensor, size: tuple[int, ...]) -> Tensor",
            description="x.new_ones(size): a new contiguous tensor of shape size (possibly ()) "
                        "with x's dtype and device, every element 1. x's values and shape are "
                        "not used.",
            reference=_new_ones_reference,
            make_inputs=_new_ones_inputs,
            cases=NEW_ONES_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("size"),
            tags=("creation", "fill"),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(x, size):
                    return _elementwise(x.new_empty(size), [], 1)
            """),
        ),
        aten_op(
            "fill_",
            signature="kernel(x: Tensor, value: float | int) -> Tensor",
            description="Tensor.fill_(value): every element of x set to value (converted to x's "
                        "dtype) in place; returns x itself. x may be non-contiguous or not even "
                        "dense (every other column of a larger tensor): write through its "
                        "strides, and only its elements." + dtypes_note,
            reference=_fill__reference,
            make_inputs=_fill_inputs,
            cases=FILL_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("x"),
            tags=("creation", "fill", "inplace"),
            mutated_args=(0,),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(x, value):
                    return _elementwise(x, [], value)
            """),
        ),
        aten_op(
            "zero_",
            signature="kernel(x: Tensor) -> Tensor",
            description="Tensor.zero_(): every element of x set to 0 in place; returns x itself. "
                        "x may be non-contiguous or not even dense (every other column of a "
                        "larger tensor): write through its strides, and only its elements.",
            reference=_zero__reference,
            make_inputs=_like_inputs,
            cases=LIKE_CASES,
            dtypes=CREATION_DTYPES,
            flops=_no_flops,
            bytes_moved=_written("x"),
            tags=("creation", "fill", "inplace"),
            mutated_args=(0,),
            reference_kernel=elementwise_kernel(FILL_EXPR, """
                def kernel(x):
                    return _elementwise(x, [], 0)
            """),
        ),
    ]
