"""Indexed reads: gather, index_select and embedding, with int64 indices.

They move values without arithmetic, so a right kernel is bitwise equal to the reference (the
dtype tolerance still applies, as for every op). The cases draw indices with repeats, select
along a non-last dim, and give one non-contiguous input, so that a kernel must use strides and
the index values rather than assume a layout.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel

INDEX_BYTES = 8  # indices are int64

# gather: "x" and "index" shapes; "dim" the gathered dim.
GATHER_CASES = (
    ShapeCase("dim0", {"x": (37, 29), "index": (50, 23), "dim": 0}),
    ShapeCase("dim1", {"x": (23, 41), "index": (19, 60), "dim": 1}),
    ShapeCase("middle_3d", {"x": (5, 17, 11), "index": (4, 9, 11), "dim": 1}),
    ShapeCase("negative_dim_transposed", {"x": (30, 26), "index": (26, 12), "dim": -1,
                                          "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_dim2", {"x": (3, 4, 13, 7), "index": (2, 4, 19, 5), "dim": 2},
              heldout=True),
    ShapeCase("logits_topk", {"x": (4096, 32000), "index": (4096, 256), "dim": 1}, tier=LARGE),
    ShapeCase("rows_dim0", {"x": (16384, 4096), "index": (8192, 4096), "dim": 0}, tier=LARGE),
)

# index_select: "x" shape, "dim", and "n_index" entries drawn from [0, x.size(dim)); where
# n_index > x.size(dim) repeats are certain.
INDEX_SELECT_CASES = (
    ShapeCase("rows_repeated", {"x": (37, 29), "dim": 0, "n_index": 50}),
    ShapeCase("columns", {"x": (13, 40), "dim": 1, "n_index": 25}),
    ShapeCase("middle_3d", {"x": (5, 17, 11), "dim": 1, "n_index": 30}),
    ShapeCase("transposed_rows", {"x": (24, 31), "dim": 0, "n_index": 40, "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_last_dim_3d", {"x": (6, 5, 19), "dim": -1, "n_index": 23}, heldout=True),
    ShapeCase("rows_32k", {"x": (32768, 1024), "dim": 0, "n_index": 16384}, tier=LARGE),
    ShapeCase("kv_pages", {"x": (64, 4096, 128), "dim": 1, "n_index": 2048}, tier=LARGE),
)

# embedding: "weight" (V, D) and "indices" shape.
EMBEDDING_CASES = (
    ShapeCase("batch_tokens", {"weight": (50, 33), "indices": (4, 7)}),
    ShapeCase("flat_tokens", {"weight": (1000, 64), "indices": (17,)}),
    ShapeCase("wide_rows_3d", {"weight": (20, 1100), "indices": (2, 3, 2)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_repeats_3d", {"weight": (13, 97), "indices": (2, 3, 5)}, heldout=True),
    ShapeCase("llama3_1b", {"weight": (128256, 2048), "indices": (8, 2048)}, tier=LARGE),
    ShapeCase("llama2_7b", {"weight": (32000, 4096), "indices": (8, 2048)}, tier=LARGE),
)


def _values(ctx: InputContext, shape: tuple[int, ...]) -> Any:
    """A normal tensor of ``shape``; with ``transposed`` (2-D only), the ``.t()`` view of a
    tensor of the reversed shape, so its strides are column-major and a kernel must use them."""
    if ctx.params.get("transposed"):
        return ctx.randn(*shape[::-1]).t()
    return ctx.randn(*shape)


def _gather_inputs(ctx: InputContext) -> list[Any]:
    x_shape, dim = tuple(ctx.params["x"]), ctx.params["dim"]
    x = _values(ctx, x_shape)
    index = ctx.randint(*ctx.params["index"], low=0, high=x_shape[dim])
    return [x, dim, index]


def _index_select_inputs(ctx: InputContext) -> list[Any]:
    x_shape, dim = tuple(ctx.params["x"]), ctx.params["dim"]
    x = _values(ctx, x_shape)
    index = ctx.randint(ctx.params["n_index"], low=0, high=x_shape[dim])
    return [x, dim, index]


def _embedding_inputs(ctx: InputContext) -> list[Any]:
    vocab, dim = ctx.params["weight"]
    weight = ctx.randn(vocab, dim)
    indices = ctx.randint(*ctx.params["indices"], low=0, high=vocab)
    return [weight, indices]


def _gather_reference(x, dim, index):  # noqa: ANN001, ANN202
    import torch

    return torch.gather(x, dim, index)


def _index_select_reference(x, dim, index):  # noqa: ANN001, ANN202
    import torch

    return torch.index_select(x, dim, index)


def _embedding_reference(weight, indices):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.embedding(indices, weight)


def _index_select_output(p: Mapping[str, Any]) -> tuple[int, ...]:
    shape = list(p["x"])
    shape[p["dim"]] = p["n_index"]
    return tuple(shape)


def _embedding_output(p: Mapping[str, Any]) -> tuple[int, ...]:
    return (*p["indices"], p["weight"][1])


def _indexed_bytes(n_indices: int, n_out: int, size: int) -> float:
    """Each index read once, each output value read from x and written once."""
    return n_indices * INDEX_BYTES + 2 * n_out * size


def _no_flops(_params: Mapping[str, Any]) -> float:
    return 0.0


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "gather",
            signature="kernel(x: Tensor, dim: int, index: Tensor) -> Tensor",
            description="torch.gather(x, dim, index): out has index's shape and "
                        "out[i][j] = x[index[i][j]][j] for dim=0, x[i][index[i][j]] for dim=1 "
                        "(likewise for any rank; dim may be negative). index is int64 of x's "
                        "rank, its entries lie in [0, x.size(dim)), index.size(d) <= x.size(d) "
                        "for d != dim; x may be non-contiguous.",
            reference=_gather_reference,
            make_inputs=_gather_inputs,
            cases=GATHER_CASES,
            flops=_no_flops,
            bytes_moved=lambda p, size: _indexed_bytes(numel(p["index"]), numel(p["index"]),
                                                       size),
            tags=("indexing",),
        ),
        aten_op(
            "index_select",
            signature="kernel(x: Tensor, dim: int, index: Tensor) -> Tensor",
            description="torch.index_select(x, dim, index): x with dim dim replaced by the "
                        "slices x.select(dim, i) for each i in index, in order, as a contiguous "
                        "tensor. index is a 1-D int64 tensor whose entries lie in "
                        "[0, x.size(dim)) and may repeat; x may be non-contiguous.",
            reference=_index_select_reference,
            make_inputs=_index_select_inputs,
            cases=INDEX_SELECT_CASES,
            flops=_no_flops,
            bytes_moved=lambda p, size: _indexed_bytes(p["n_index"],
                                                       numel(_index_select_output(p)), size),
            tags=("indexing",),
        ),
        aten_op(
            "embedding",
            signature="kernel(weight: Tensor, indices: Tensor) -> Tensor",
            description="aten::embedding(weight, indices) = F.embedding(indices, weight): row "
                        "lookup weight[indices] for weight (V, D) and int64 indices of any shape "
                        "with entries in [0, V), giving a contiguous indices.shape + (D,) tensor "
                        "(no padding_idx, no max_norm). Note the order: weight comes first.",
            reference=_embedding_reference,
            make_inputs=_embedding_inputs,
            cases=EMBEDDING_CASES,
            flops=_no_flops,
            bytes_moved=lambda p, size: _indexed_bytes(numel(p["indices"]),
                                                       numel(_embedding_output(p)), size),
            tags=("indexing", "embedding"),
        ),
    ]
