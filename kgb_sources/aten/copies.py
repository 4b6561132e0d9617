"""Copies: clone, contiguous, _to_copy (a copy converted to another dtype) and the in-place
copy_ (broadcasting and converting src into a possibly non-contiguous self).

All four render the ``elementwise`` template with the expression ``x0``: the strided load and
store are the whole op. What differs is the output each one allocates (or takes), which is what
ATen's definitions differ in: clone keeps a dense input's strides (preserve_format), contiguous
returns a row-major tensor, _to_copy converts, copy_ writes through self's strides.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import FLOATS, aten_op, numel
from kgb_sources.aten._elementwise import INTS, elementwise_kernel
from kgb_sources.aten.creation import LIKE_CASES, _like_tensor

COPY_DTYPES = FLOATS + INTS

# _to_copy: the destination dtype per case, by the input's kind (float inputs also go to an
# integer dtype: truncation toward zero, as ATen converts).
TO_COPY_CASES = (
    ShapeCase("odd_2d_to_half", {"x": (37, 129), "float_to": "float16", "int_to": "float32"}),
    ShapeCase("transposed_to_fp32", {"x": (40, 24), "layout": "transposed",
                                     "float_to": "float32", "int_to": "int64"}),
    ShapeCase("sliced_to_int32", {"x": (33, 65), "layout": "sliced", "float_to": "int32",
                                  "int_to": "float16"}),
    # To bf16, rounded to nearest even (GPUs, and the CPU backend's bf16 shim: the bare
    # interpreter rounded toward zero, and this case was left out until the shim).
    ShapeCase("odd_2d_to_bf16", {"x": (37, 41), "float_to": "bfloat16", "int_to": "bfloat16"}),
    ShapeCase("odd_3d_to_fp64", {"x": (3, 17, 40), "float_to": "float64", "int_to": "int32"}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"x": (2, 7, 11, 13), "float_to": "float16", "int_to": "float32"},
              heldout=True),
    ShapeCase("llm_cast_half", {"x": (8192, 4096), "float_to": "float16", "int_to": "float32"},
              tier=LARGE),
    ShapeCase("transposed_cast", {"x": (4096, 4096), "layout": "transposed",
                                  "float_to": "float32", "int_to": "int64"}, tier=LARGE),
)

# copy_: self's shape and layout, src's shape (broadcast into self) and whether src has the
# other dtype of the pair (float <-> int32 for float selves, float32 for integer ones).
COPY__CASES = (
    ShapeCase("same_shape", {"x": (37, 129), "src": (37, 129)}),
    ShapeCase("row_broadcast_into_transposed", {"x": (40, 24), "layout": "transposed",
                                                "src": (24,)}),
    ShapeCase("sliced_self_other_dtype", {"x": (33, 65), "layout": "sliced", "src": (33, 65),
                                          "convert": True}),
    ShapeCase("column_broadcast_3d", {"x": (3, 17, 40), "src": (17, 1)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_broadcast", {"x": (2, 7, 11, 13), "src": (7, 1, 13),
                                       "convert": True}, heldout=True),
    ShapeCase("llm_hidden", {"x": (8192, 4096), "src": (8192, 4096)}, tier=LARGE),
    ShapeCase("bias_broadcast_convert", {"x": (16, 1024, 4096), "src": (4096,),
                                         "convert": True}, tier=LARGE),
)


def _to_dtype(ctx: InputContext) -> Any:
    key = "float_to" if ctx.dtype.is_floating_point else "int_to"
    return getattr(ctx.torch, ctx.params[key])


def _to_copy_inputs(ctx: InputContext) -> list[Any]:
    x = _like_tensor(ctx)
    if _to_dtype(ctx) in (ctx.torch.int32, ctx.torch.int64) and x.is_floating_point():
        x = x * 50  # values well away from 0, so truncation is exercised, inside int32
    return [x, _to_dtype(ctx)]


def _copy__inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    self = _like_tensor(ctx)
    src_dtype = ctx.dtype
    if ctx.params.get("convert"):
        src_dtype = torch.int32 if ctx.dtype.is_floating_point else torch.float32
    if src_dtype.is_floating_point:
        src = ctx.randn(*ctx.params["src"], dtype=src_dtype) * 40
    else:
        src = ctx.randint(*ctx.params["src"], low=-100, high=100, dtype=src_dtype)
    return [self, src]


def _clone_reference(x):  # noqa: ANN001, ANN202
    return x.clone()


def _contiguous_reference(x):  # noqa: ANN001, ANN202
    return x.contiguous()


def _to_copy_reference(x, dtype):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten._to_copy(x, dtype=dtype)


def _copy__reference(self, src):  # noqa: ANN001, ANN202
    return self.copy_(src)


def _with_layout(out: Any, _args: Any) -> Any:
    """contiguous's result must be row-major, not just hold the right values: compare that
    too (a kernel returning a strided copy is wrong)."""
    import torch

    return [out, torch.tensor(out.is_contiguous())]


def _read_write(key: str):  # noqa: ANN202
    return lambda p, size: 2 * numel(p[key]) * size


def _no_flops(_p: Mapping[str, Any]) -> float:
    return 0.0


def _copy__bytes(p: Mapping[str, Any], size: int) -> float:
    return (numel(p["x"]) + numel(p["src"])) * size


def operators() -> list[OperatorSpec]:
    layouts = (" x may be non-contiguous (transposed, or every other column of a wider "
               "tensor).")
    return [
        aten_op(
            "clone",
            signature="kernel(x: Tensor) -> Tensor",
            description="torch.clone(x): a new tensor with x's values, shape and dtype, "
                        "not sharing x's memory (memory_format=preserve_format: a dense x's "
                        "strides are kept, torch.empty_like does that)." + layouts,
            reference=_clone_reference,
            make_inputs=lambda ctx: [_like_tensor(ctx)],
            cases=LIKE_CASES,
            dtypes=COPY_DTYPES,
            flops=_no_flops,
            bytes_moved=_read_write("x"),
            tags=("movement", "copy"),
            reference_kernel=elementwise_kernel("x0", """
                def kernel(x):
                    out = torch.empty_like(x)
                    return _elementwise(out, [x], compute_float=False)
            """),
        ),
        aten_op(
            "contiguous",
            signature="kernel(x: Tensor) -> Tensor",
            description="x.contiguous(): x's values in a row-major (C-contiguous) tensor of "
                        "x's shape and dtype; the result is checked to be contiguous. For "
                        "these checks x is always a new copy's input: return a new tensor "
                        "even when x is already contiguous (returning x itself is refused as "
                        "aliasing the input)." + layouts,
            reference=_contiguous_reference,
            make_inputs=lambda ctx: [_like_tensor(ctx)],
            cases=LIKE_CASES,
            dtypes=COPY_DTYPES,
            flops=_no_flops,
            bytes_moved=_read_write("x"),
            tags=("movement", "copy"),
            compared=_with_layout,
            reference_kernel=elementwise_kernel("x0", """
                def kernel(x):
                    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
                    return _elementwise(out, [x], compute_float=False)
            """),
        ),
        aten_op(
            "_to_copy",
            signature="kernel(x: Tensor, dtype: torch.dtype) -> Tensor",
            description="aten._to_copy(x, dtype=dtype) (what x.to(dtype) calls): a new tensor "
                        "of x's shape holding x's values converted to dtype: floats round to "
                        "nearest even, float to integer truncates toward zero. Strides as "
                        "torch.empty_like(x, dtype=dtype) gives them (preserve_format)."
                        + layouts,
            reference=_to_copy_reference,
            make_inputs=_to_copy_inputs,
            cases=TO_COPY_CASES,
            dtypes=COPY_DTYPES,
            flops=_no_flops,
            bytes_moved=_read_write("x"),
            tags=("movement", "copy", "cast"),
            reference_kernel=elementwise_kernel("x0", """
                def kernel(x, dtype):
                    out = torch.empty_like(x, dtype=dtype)
                    return _elementwise(out, [x], compute_float=False)
            """),
        ),
        aten_op(
            "copy_",
            signature="kernel(self: Tensor, src: Tensor) -> Tensor",
            description="self.copy_(src): writes src, broadcast to self's shape and converted "
                        "to self's dtype (float to integer truncates toward zero), into self "
                        "in place, through self's strides, and returns self. self may be "
                        "non-contiguous; src may have another dtype and fewer dims.",
            reference=_copy__reference,
            make_inputs=_copy__inputs,
            cases=COPY__CASES,
            dtypes=COPY_DTYPES,
            flops=_no_flops,
            bytes_moved=_copy__bytes,
            tags=("movement", "copy", "inplace"),
            mutated_args=(0,),
            reference_kernel=elementwise_kernel("x0", """
                def kernel(self, src):
                    return _elementwise(self, [src], compute_float=False)
            """),
        ),
    ]
