"""Ops built on p-norms of slices or rows: renorm (rescales the slices along a dim whose norm
exceeds a bound) and pairwise_distance (the norm of a row-wise difference). Both accumulate
sum |v|^p in fp32; fp16/bf16 references compute in fp32 and round once (their native calls are
the timed baselines). Neither scales atol with the terms summed: an output is a value times
a norm's factor, or a norm (a square root), whose error is relative, and an atol grown with
the row length would let a kernel that never rescales pass."""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

# renorm: shape, the renormed dim, p and maxnorm (chosen below the typical slice norm, so most
# slices are scaled and some, drawn smaller, are not); "transposed" gives a non-contiguous x.
RENORM_CASES = (
    ShapeCase("rows_p2", {"shape": (37, 129), "p": 2.0, "dim": 0, "maxnorm": 10.0}),
    ShapeCase("columns_p1_transposed", {"shape": (40, 24), "p": 1.0, "dim": 1,
                                        "maxnorm": 25.0, "transposed": True}),
    ShapeCase("middle_dim_p3", {"shape": (3, 17, 40), "p": 3.0, "dim": 1, "maxnorm": 4.0}),
    # Five slices of 2053 (a prime): the norm loop runs over several blocks. (Slices are one
    # program each, and 2053 tiny programs cost a minute in the interpreter.)
    ShapeCase("last_dim_long", {"shape": (2053, 5), "p": 2.0, "dim": -1, "maxnorm": 40.0}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13), "p": 2.0, "dim": 2, "maxnorm": 8.0},
              heldout=True),
    ShapeCase("embedding_rows", {"shape": (32000, 4096), "p": 2.0, "dim": 0, "maxnorm": 50.0},
              tier=LARGE),
    ShapeCase("conv_filters", {"shape": (512, 256, 3, 3), "p": 2.0, "dim": 0, "maxnorm": 40.0},
              tier=LARGE),
)

# pairwise_distance: rows x features, x2 either the same shape or one broadcast row, p, eps
# and keepdim.
PAIRWISE_CASES = (
    ShapeCase("p2_default", {"x1": (37, 129), "x2": (37, 129)}),
    ShapeCase("p1_keepdim", {"x1": (40, 24), "x2": (40, 24), "p": 1.0, "eps": 1e-6,
                             "keepdim": True}),
    ShapeCase("p3_broadcast_row", {"x1": (33, 65), "x2": (1, 65), "p": 3.0, "eps": 1e-3,
                                   "keepdim": False}),
    ShapeCase("transposed_long_rows", {"x1": (7, 2053), "x2": (7, 2053), "p": 2.0,
                                       "eps": 0.0, "keepdim": False, "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_p2_eps", {"x1": (13, 77), "x2": (13, 77), "p": 2.0, "eps": 1e-2,
                                 "keepdim": True}, heldout=True),
    ShapeCase("retrieval_batch", {"x1": (8192, 4096), "x2": (8192, 4096)}, tier=LARGE),
    ShapeCase("query_against_many", {"x1": (65536, 768), "x2": (1, 768), "p": 1.0,
                                     "eps": 1e-6, "keepdim": False}, tier=LARGE),
)


def _draw(ctx: InputContext, shape: tuple[int, ...], transposed: bool) -> Any:
    if transposed:
        return ctx.randn(*shape[::-1]).transpose(0, 1)
    return ctx.randn(*shape)


def _renorm_inputs(ctx: InputContext) -> list[Any]:
    shape = tuple(ctx.params["shape"])
    x = _draw(ctx, shape, bool(ctx.params.get("transposed")))
    # Every third slice along dim is shrunk, so its norm stays under maxnorm (copied as is).
    dim = ctx.params["dim"] % len(shape)
    keep = (ctx.torch.arange(shape[dim]) % 3 == 0).to(x.device)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    x = ctx.torch.where(keep.view(view), x * 0.01, x)
    return [x, ctx.params["p"], ctx.params["dim"], ctx.params["maxnorm"]]


def _pairwise_inputs(ctx: InputContext) -> list[Any]:
    transposed = bool(ctx.params.get("transposed"))
    x1 = _draw(ctx, tuple(ctx.params["x1"]), transposed)
    x2 = _draw(ctx, tuple(ctx.params["x2"]), transposed)
    if "p" not in ctx.params:
        return [x1, x2]
    return [x1, x2, ctx.params["p"], ctx.params["eps"], ctx.params["keepdim"]]


# fp16/bf16 references: in_fp32 (see kgb_sources/aten/_build.py).


def _renorm_native(x, p, dim, maxnorm):  # noqa: ANN001, ANN202
    import torch

    return torch.renorm(x, p, dim, maxnorm)


def _pairwise_native(x1, x2, *args):  # noqa: ANN001, ANN002, ANN202
    import torch.nn.functional as F

    return F.pairwise_distance(x1, x2, *args)


def _pairwise_rows(p: Mapping[str, Any]) -> int:
    return p["x1"][0]


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "renorm",
            signature="kernel(x: Tensor, p: float, dim: int, maxnorm: float) -> Tensor",
            description="torch.renorm(x, p, dim, maxnorm): for each slice x.select(dim, s), "
                        "its p-norm over all its elements (sum |v|^p)^(1/p), accumulated in "
                        "fp32; slices with norm > maxnorm are multiplied by "
                        "maxnorm / (norm + 1e-7), the others copied. A new tensor of x's "
                        "shape and dtype; x may be non-contiguous, dim may be negative.",
            reference=in_fp32(_renorm_native),
            baseline=_renorm_native,
            make_inputs=_renorm_inputs,
            cases=RENORM_CASES,
            flops=lambda p: 4 * numel(p["shape"]),
            bytes_moved=lambda p, size: 3 * numel(p["shape"]) * size,
            tags=("norm", "p_norm"),
        ),
        aten_op(
            "pairwise_distance",
            signature="kernel(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, "
                      "keepdim: bool = False) -> Tensor",
            description="F.pairwise_distance(x1, x2, p, eps, keepdim): for each row i of the "
                        "2-D inputs (x2 may be one row, broadcast), (sum_j |x1[i, j] - "
                        "x2[i, j] + eps|^p)^(1/p), accumulated in fp32; shape (rows,), or "
                        "(rows, 1) with keepdim. Inputs may be non-contiguous.",
            reference=in_fp32(_pairwise_native),
            baseline=_pairwise_native,
            make_inputs=_pairwise_inputs,
            cases=PAIRWISE_CASES,
            flops=lambda p: 4 * numel(p["x1"]),
            bytes_moved=lambda p, size: (numel(p["x1"]) + numel(p["x2"])
                                         + _pairwise_rows(p)) * size,
            tags=("reduction", "p_norm"),
        ),
    ]
