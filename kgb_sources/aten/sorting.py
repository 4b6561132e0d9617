"""Sorting along one dim: sort and topk, returning values and int64 indices.

Indices are only well defined when no two values tie (sort's default is not stable, and
topk's order among equal values is unspecified), so every case draws rows that are a random
permutation of distinct values, exactly representable in fp16 and bf16 as well: a right
kernel is bitwise equal to the reference in both outputs. The sorted dim holds at most 1024
elements (one block) in every case, the small ones and the large ones.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, dtype_itemsize

from kgb_sources.aten._build import aten_op, numel
from kgb_sources.aten.movement import with_includes

SORT_CASES = (
    ShapeCase("last_dim_ascending", {"x": (9, 129), "dim": 1, "descending": False}),
    ShapeCase("first_dim_descending_transposed", {"x": (131, 7), "dim": 0, "descending": True,
                                                  "transposed": True}),
    ShapeCase("middle_3d_descending", {"x": (3, 61, 5), "dim": 1, "descending": True}),
    ShapeCase("long_row_negative_dim", {"x": (2, 311), "dim": -1, "descending": False}),
    ShapeCase("heldout_first_dim_3d", {"x": (43, 3, 2), "dim": 0, "descending": True},
              heldout=True),
    ShapeCase("router_logits", {"x": (32768, 256), "dim": 1, "descending": True}, tier=LARGE),
    ShapeCase("rows_1024", {"x": (4096, 1024), "dim": -1, "descending": False}, tier=LARGE),
)

TOPK_CASES = (
    ShapeCase("largest_last_dim", {"x": (9, 129), "k": 5, "dim": 1, "largest": True}),
    ShapeCase("smallest_first_dim_transposed", {"x": (131, 7), "k": 17, "dim": 0,
                                                "largest": False, "transposed": True}),
    ShapeCase("all_middle_3d", {"x": (3, 61, 5), "k": 61, "dim": 1, "largest": True}),
    ShapeCase("long_row_smallest", {"x": (2, 311), "k": 100, "dim": -1, "largest": False}),
    ShapeCase("heldout_first_dim_3d", {"x": (43, 3, 2), "k": 3, "dim": 0, "largest": True},
              heldout=True),
    ShapeCase("moe_routing", {"x": (32768, 256), "k": 8, "dim": 1, "largest": True},
              tier=LARGE),
    ShapeCase("rows_1024", {"x": (4096, 1024), "k": 50, "dim": -1, "largest": True},
              tier=LARGE),
)


def distinct_rows(ctx: InputContext) -> Any:
    """x of shape "x" whose lines along "dim" are each a random permutation of n distinct
    values, +-(128 + k % 128) * 2**(k // 128 - 10) for k < n: 8-bit significands, so exact in
    fp16 and bf16 too (no rounding can make two equal). With "transposed", x is stored with its
    dims reversed (column-major for 2-D)."""
    torch = ctx.torch
    shape, dim = list(ctx.params["x"]), ctx.params["dim"] % len(ctx.params["x"])
    n = shape[dim]
    k = torch.arange(n, dtype=torch.float32)
    sign = 1.0 - 2.0 * (torch.arange(n) % 2).float()
    base = sign * (128 + k % 128) * torch.exp2(torch.div(k, 128, rounding_mode="floor") - 10)
    lines = [s for d, s in enumerate(shape) if d != dim]
    order = torch.rand(lines + [n], generator=ctx.generator).argsort(dim=-1)
    x = base[order].movedim(-1, dim).contiguous()
    if ctx.params.get("transposed"):
        reverse = list(reversed(range(x.dim())))
        x = x.permute(*reverse).contiguous().permute(*reverse)
    return x.to(ctx.dtype).to(ctx.device)


def _sort_inputs(ctx: InputContext) -> list[Any]:
    return [distinct_rows(ctx), ctx.params["dim"], ctx.params["descending"]]


def _topk_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [distinct_rows(ctx), p["k"], p["dim"], p["largest"], True]


def _sort_reference(x, dim, descending):  # noqa: ANN001, ANN202
    import torch

    values, indices = torch.sort(x, dim=dim, descending=descending)
    return values, indices


def _topk_reference(x, k, dim, largest, sorted):  # noqa: ANN001, ANN202
    import torch

    values, indices = torch.topk(x, k, dim=dim, largest=largest, sorted=sorted)
    return values, indices


def _sort_flops(p: Mapping[str, Any]) -> float:
    """A bitonic network's compare-exchanges: n/2 * log2(n) * (log2(n) + 1) / 2 per row."""
    n = p["x"][p["dim"]]
    log_n = max(1, (n - 1).bit_length())
    return float(numel(p["x"]) // n * (n // 2) * log_n * (log_n + 1) // 2)


def _sorted_bytes(p: Mapping[str, Any], size: int, kept: int) -> float:
    rows = numel(p["x"]) // p["x"][p["dim"]]
    return float(numel(p["x"]) * size + rows * kept * (size + dtype_itemsize("int64")))


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "sort",
            signature="kernel(x: Tensor, dim: int, descending: bool) -> tuple[Tensor, Tensor]",
            description="torch.sort(x, dim, descending) (stable=False): (values, indices), "
                        "both of x's shape: values sorted along dim (ascending, or descending "
                        "when descending=True), and the int64 positions along dim they came "
                        "from. dim may be negative and x may be non-contiguous; x.size(dim) <= "
                        "1024 in every case, and no two values in one line are equal, so the "
                        "indices are unique.",
            reference=_sort_reference, make_inputs=_sort_inputs, cases=SORT_CASES,
            flops=_sort_flops,
            bytes_moved=lambda p, size: _sorted_bytes(p, size, p["x"][p["dim"]]),
            tags=("sort",), reference_kernel=with_includes("sort")),
        aten_op(
            "topk",
            signature="kernel(x: Tensor, k: int, dim: int, largest: bool, sorted: bool) "
                      "-> tuple[Tensor, Tensor]",
            description="torch.topk(x, k, dim, largest, sorted=True): (values, indices) of the "
                        "k largest (largest=True) or smallest values along dim, in sorted "
                        "order (descending for largest, ascending otherwise), with their int64 "
                        "positions along dim; both have x's shape with dim of size k. dim may "
                        "be negative and x may be non-contiguous; x.size(dim) <= 1024 in every "
                        "case, and no two values in one line are equal.",
            reference=_topk_reference, make_inputs=_topk_inputs, cases=TOPK_CASES,
            flops=_sort_flops, bytes_moved=lambda p, size: _sorted_bytes(p, size, p["k"]),
            tags=("sort", "topk"), reference_kernel=with_includes("topk")),
    ]
