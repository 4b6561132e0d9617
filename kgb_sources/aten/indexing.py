"""Indexed reads and writes with int64 indices: gather, index_select, embedding and index
(advanced indexing) read; scatter, scatter_add, index_add and index_put_ write.

Reads move values without arithmetic, so a right kernel is bitwise equal to the reference (the
dtype tolerance still applies, as for every op). The cases draw indices with repeats, select
along a non-last dim, and give one non-contiguous input, so that a kernel must use strides and
the index values rather than assume a layout.

Writes come in two kinds. scatter and index_put_ with accumulate=False *store*: their cases draw
indices that never repeat a target (a permutation per line), because with repeats ATen leaves
the winner unspecified and no result could be checked. scatter_add, index_add and index_put_
with accumulate=True *add*, and their indices repeat on purpose (a kernel needs atomics or a
sort); their fp16/bf16 references add in fp32 and round once, as an fp32-accumulating kernel
does, and atol scales with the number of terms that can meet in one target.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel
from kgb_sources.aten.movement import tensor, with_includes

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
    # weight the first columns of a wider table (a sliced view: its rows are strided).
    ShapeCase("sliced_table", {"weight": (60, 40), "indices": (5, 6), "table_width": 72}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_repeats_3d", {"weight": (13, 97), "indices": (2, 3, 5)}, heldout=True),
    ShapeCase("llama3_1b", {"weight": (128256, 2048), "indices": (8, 2048)}, tier=LARGE),
    ShapeCase("llama2_7b", {"weight": (32000, 4096), "indices": (8, 2048)}, tier=LARGE),
)


# scatter: "x" and "index" shapes, "dim", and either "src" (a shape, >= index's) or "value".
# Indices never repeat a target (see the module docstring).
SCATTER_CASES = (
    ShapeCase("dim0_src_larger", {"x": (37, 29), "index": (20, 23), "dim": 0, "src": (25, 29)}),
    ShapeCase("dim1_value", {"x": (23, 41), "index": (19, 30), "dim": 1, "value": 2.5}),
    ShapeCase("middle_3d_src_transposed", {"x": (5, 17, 11), "index": (4, 9, 11), "dim": 1,
                                           "src": (5, 9, 11), "src_layout": "transposed"}),
    ShapeCase("negative_dim_value_transposed", {"x": (30, 26), "index": (26, 12), "dim": -1,
                                                "value": -1.25, "layout": "transposed"}),
    ShapeCase("heldout_4d_dim2_src", {"x": (3, 4, 13, 7), "index": (2, 4, 10, 5), "dim": 2,
                                      "src": (3, 4, 10, 6)}, heldout=True),
    ShapeCase("logits_rows", {"x": (4096, 32000), "index": (4096, 256), "dim": 1,
                              "src": (4096, 256)}, tier=LARGE),
    ShapeCase("rows_dim0_value", {"x": (16384, 4096), "index": (8192, 4096), "dim": 0,
                                  "value": 0.0}, tier=LARGE),
)

# scatter_add: indices repeat; "src" shape >= index's.
SCATTER_ADD_CASES = (
    ShapeCase("dim0_repeats", {"x": (17, 29), "index": (50, 23), "dim": 0, "src": (50, 29)}),
    ShapeCase("dim1", {"x": (23, 41), "index": (19, 60), "dim": 1, "src": (19, 60)}),
    ShapeCase("middle_3d_src_transposed", {"x": (5, 17, 11), "index": (4, 30, 11), "dim": 1,
                                           "src": (5, 30, 11), "src_layout": "transposed"}),
    ShapeCase("negative_dim_transposed", {"x": (30, 26), "index": (26, 12), "dim": -1,
                                          "src": (28, 12), "layout": "transposed"}),
    ShapeCase("heldout_4d_dim2", {"x": (3, 4, 13, 7), "index": (2, 4, 19, 5), "dim": 2,
                                  "src": (3, 4, 19, 6)}, heldout=True),
    ShapeCase("segment_sums", {"x": (1024, 4096), "index": (8192, 4096), "dim": 0,
                               "src": (8192, 4096)}, tier=LARGE),
    ShapeCase("bins_dim1", {"x": (4096, 1024), "index": (4096, 8192), "dim": 1,
                            "src": (4096, 8192)}, tier=LARGE),
)

# index_add: 1-D index of "n_index" entries with repeats along "dim"; source is x's shape with
# dim replaced by n_index.
INDEX_ADD_CASES = (
    ShapeCase("rows_repeats", {"x": (37, 29), "dim": 0, "n_index": 50, "alpha": 1.0}),
    ShapeCase("columns_transposed", {"x": (13, 40), "dim": 1, "n_index": 25, "alpha": -0.5,
                                     "layout": "transposed"}),
    ShapeCase("middle_3d_source_transposed", {"x": (5, 17, 11), "dim": -2, "n_index": 30,
                                              "alpha": 2.0, "src_layout": "transposed"}),
    ShapeCase("few_rows", {"x": (24, 31), "dim": 0, "n_index": 7, "alpha": 1.0}),
    ShapeCase("heldout_last_dim", {"x": (6, 5, 19), "dim": -1, "n_index": 23, "alpha": 0.75},
              heldout=True),
    ShapeCase("embedding_grad", {"x": (32000, 4096), "dim": 0, "n_index": 8192, "alpha": 1.0},
              tier=LARGE),
    ShapeCase("kv_pages", {"x": (64, 4096, 128), "dim": 1, "n_index": 2048, "alpha": 1.0},
              tier=LARGE),
)

# index: "index_shapes", one per indexed leading dim (broadcast together); entries in
# [0, size), or in [-size, size) with "negative".
INDEX_CASES = (
    ShapeCase("rows", {"x": (37, 29), "index_shapes": ((50,),)}),
    ShapeCase("rows_2d_index_negative", {"x": (13, 40), "index_shapes": ((4, 9),),
                                         "negative": True}),
    ShapeCase("rows_3d_transposed", {"x": (24, 5, 31), "index_shapes": ((17,),),
                                     "layout": "transposed"}),
    ShapeCase("two_broadcast", {"x": (9, 17, 11), "index_shapes": ((5, 1), (1, 6))}),
    ShapeCase("heldout_two_paired_negative", {"x": (6, 7, 19), "index_shapes": ((4,), (4,)),
                                              "negative": True}, heldout=True),
    ShapeCase("token_rows", {"x": (32000, 4096), "index_shapes": ((8192,),)}, tier=LARGE),
    ShapeCase("batch_positions", {"x": (64, 4096, 128), "index_shapes": ((64, 1), (1, 2048))},
              tier=LARGE),
)

# index_put_: "index_shapes" as for index; accumulate=False draws distinct positions,
# accumulate=True repeats them.
INDEX_PUT_CASES = (
    ShapeCase("rows_distinct", {"x": (37, 29), "index_shapes": ((20,),), "accumulate": False}),
    ShapeCase("rows_accumulate_repeats", {"x": (13, 40), "index_shapes": ((50,),),
                                          "accumulate": True}),
    ShapeCase("two_broadcast_distinct", {"x": (9, 17, 11), "index_shapes": ((4, 1), (1, 6)),
                                         "accumulate": False}),
    ShapeCase("two_paired_accumulate", {"x": (6, 7, 5), "index_shapes": ((40,), (40,)),
                                        "accumulate": True}),
    # x a transposed view: the rows written in place are strided.
    ShapeCase("rows_transposed_x", {"x": (29, 37), "index_shapes": ((15,),),
                                    "accumulate": False, "layout": "transposed"}),
    ShapeCase("heldout_4d_accumulate", {"x": (5, 8, 3, 7), "index_shapes": ((12,),),
                                        "accumulate": True}, heldout=True),
    ShapeCase("embedding_grad", {"x": (32000, 4096), "index_shapes": ((8192,),),
                                 "accumulate": True}, tier=LARGE),
    ShapeCase("rows_distinct_large", {"x": (65536, 1024), "index_shapes": ((16384,),),
                                      "accumulate": False}, tier=LARGE),
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
    width = ctx.params.get("table_width", dim)
    weight = ctx.randn(vocab, width)[:, :dim] if width > dim else ctx.randn(vocab, dim)
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


# -- writes: inputs --------------------------------------------------------------------------
def _distinct_along(ctx: InputContext, shape: tuple[int, ...], dim: int, high: int) -> Any:
    """An int64 tensor of ``shape`` whose entries along ``dim`` are distinct within each line,
    drawn from [0, high): the first shape[dim] entries of a random permutation per line."""
    torch = ctx.torch
    dim = dim % len(shape)
    moved = [s for d, s in enumerate(shape) if d != dim] + [high]
    keys = torch.rand(moved, generator=ctx.generator)
    return keys.argsort(dim=-1)[..., :shape[dim]].movedim(-1, dim).contiguous().to(ctx.device)


def _scatter_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = tensor(ctx, p["x"], p.get("layout", "contiguous"))
    dim = p["dim"]
    index = _distinct_along(ctx, tuple(p["index"]), dim, p["x"][dim])
    if "value" in p:
        return [x, dim, index, p["value"]]
    return [x, dim, index, tensor(ctx, p["src"], p.get("src_layout", "contiguous"))]


def _scatter_add_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = tensor(ctx, p["x"], p.get("layout", "contiguous"))
    index = ctx.randint(*p["index"], low=0, high=p["x"][p["dim"]])
    return [x, p["dim"], index, tensor(ctx, p["src"], p.get("src_layout", "contiguous"))]


def _index_add_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = tensor(ctx, p["x"], p.get("layout", "contiguous"))
    dim = p["dim"]
    index = ctx.randint(p["n_index"], low=0, high=p["x"][dim])
    source_shape = list(p["x"])
    source_shape[dim] = p["n_index"]
    source = tensor(ctx, source_shape, p.get("src_layout", "contiguous"))
    return [x, dim, index, source, p["alpha"]]


def _index_tensors(ctx: InputContext, distinct: bool = False) -> list[Any]:
    """One int64 index tensor per entry of "index_shapes", for x's leading dims. distinct:
    no position repeats (paired 1-D indices draw distinct flat positions; broadcast ones a
    permutation per dim)."""
    torch = ctx.torch
    p = ctx.params
    shapes, sizes = [tuple(s) for s in p["index_shapes"]], p["x"][:len(p["index_shapes"])]
    if not distinct:
        low = (lambda size: -size) if p.get("negative") else (lambda size: 0)
        return [ctx.randint(*shape, low=low(size), high=size) for shape, size in zip(shapes, sizes)]
    if len(set(shapes)) == 1:
        flat = torch.randperm(numel(sizes), generator=ctx.generator)[:numel(shapes[0])]
        coords = []
        for size in reversed(sizes):
            coords.append(flat % size)
            flat = flat // size
        return [c.reshape(shapes[0]).to(ctx.device) for c in reversed(coords)]
    return [torch.randperm(size, generator=ctx.generator)[:numel(shape)].reshape(shape)
            .to(ctx.device) for shape, size in zip(shapes, sizes)]


def _indexed_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    shapes = [tuple(s) for s in p["index_shapes"]]
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + s for s in shapes]
    return tuple(max(sizes) for sizes in zip(*padded)) + tuple(p["x"][len(shapes):])


def _index_inputs(ctx: InputContext) -> list[Any]:
    x = tensor(ctx, ctx.params["x"], ctx.params.get("layout", "contiguous"))
    return [x, _index_tensors(ctx)]


def _index_put_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = tensor(ctx, p["x"], p.get("layout", "contiguous"))
    indices = _index_tensors(ctx, distinct=not p["accumulate"])
    return [x, indices, ctx.randn(*_indexed_shape(p)), p["accumulate"]]


# -- writes: references ----------------------------------------------------------------------
def _half(x: Any) -> bool:
    import torch

    return x.dtype in (torch.float16, torch.bfloat16)


def _scatter_reference(x, dim, index, src):  # noqa: ANN001, ANN202
    import torch

    return torch.scatter(x, dim, index, src)


def _scatter_add_reference(x, dim, index, src):  # noqa: ANN001, ANN202
    """torch.scatter_add, added in fp32 for fp16/bf16 and rounded once (CUDA adds atomically in
    the storage dtype, so its fp16/bf16 sums depend on the order); ``baseline`` is native."""
    import torch

    if _half(x):
        return torch.scatter_add(x.float(), dim, index, src.float()).to(x.dtype)
    return torch.scatter_add(x, dim, index, src)


def _scatter_add_native(x, dim, index, src):  # noqa: ANN001, ANN202
    import torch

    return torch.scatter_add(x, dim, index, src)


def _index_add_reference(x, dim, index, source, alpha):  # noqa: ANN001, ANN202
    """torch.index_add, added in fp32 for fp16/bf16 and rounded once (as scatter_add)."""
    import torch

    if _half(x):
        return torch.index_add(x.float(), dim, index, source.float(), alpha=alpha).to(x.dtype)
    return torch.index_add(x, dim, index, source, alpha=alpha)


def _index_add_native(x, dim, index, source, alpha):  # noqa: ANN001, ANN202
    import torch

    return torch.index_add(x, dim, index, source, alpha=alpha)


def _index_reference(x, indices):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.index(x, indices)


def _index_put_reference(x, indices, values, accumulate):  # noqa: ANN001, ANN202
    """x.index_put_(indices, values, accumulate); with accumulate, fp16/bf16 are added in fp32
    and rounded once (as scatter_add), then written into x."""
    if accumulate and _half(x):
        summed = x.float().index_put_(indices, values.float(), accumulate=True)
        return x.copy_(summed)
    return x.index_put_(indices, values, accumulate=accumulate)


def _index_put_native(x, indices, values, accumulate):  # noqa: ANN001, ANN202
    return x.index_put_(indices, values, accumulate=accumulate)


def _written_bytes(p: Mapping[str, Any], size: int, n_index: int, n_src: int) -> float:
    """A copy of x (read and written), each index read once, each scattered value read and
    written once."""
    return float(2 * numel(p["x"]) * size + n_index * INDEX_BYTES + 2 * n_src * size)


def _index_add_numel(p: Mapping[str, Any]) -> int:
    return numel(p["x"]) // p["x"][p["dim"]] * p["n_index"]


def _index_positions(p: Mapping[str, Any]) -> int:
    return numel(_indexed_shape(p)[:max(len(s) for s in p["index_shapes"])])


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
            tags=("index", "indexing"),
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
            tags=("index", "indexing"),
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
            tags=("index", "indexing", "embedding"),
        ),
        aten_op(
            "index",
            signature="kernel(x: Tensor, indices: list[Tensor]) -> Tensor",
            description="aten::index(x, indices) = x[indices[0]] or x[indices[0], indices[1]]: "
                        "advanced indexing of x's leading dims by int64 index tensors, which "
                        "broadcast against each other (e.g. shapes (a, 1) and (1, b)); entries "
                        "lie in [-size, size), negative ones counting from the end. Output: a "
                        "contiguous tensor of shape broadcast(index shapes) + "
                        "x.shape[len(indices):]; x may be non-contiguous.",
            reference=_index_reference, make_inputs=_index_inputs, cases=INDEX_CASES,
            flops=_no_flops,
            bytes_moved=lambda p, size: _indexed_bytes(
                _index_positions(p) * len(p["index_shapes"]), numel(_indexed_shape(p)), size),
            tags=("index", "indexing"), reference_kernel=with_includes("index")),
        aten_op(
            "index_put_",
            signature="kernel(x: Tensor, indices: list[Tensor], values: Tensor, "
                      "accumulate: bool) -> Tensor",
            description="x.index_put_(indices, values, accumulate), IN PLACE: x[indices] = "
                        "values, or x[indices] += values when accumulate; indices are int64 "
                        "tensors for x's leading dims that broadcast against each other, "
                        "entries in [0, size); values has the shape of x[indices]. With "
                        "accumulate=False the indexed positions are distinct; with "
                        "accumulate=True they repeat and every value must be added (fp16/bf16 "
                        "sums should be formed in fp32 and rounded once). Returns x itself.",
            reference=_index_put_reference, baseline=_index_put_native,
            make_inputs=_index_put_inputs, cases=INDEX_PUT_CASES, flops=lambda p: (
                numel(_indexed_shape(p)) if p["accumulate"] else 0),
            bytes_moved=lambda p, size: float(
                _index_positions(p) * len(p["index_shapes"]) * INDEX_BYTES
                + numel(_indexed_shape(p)) * size * (3 if p["accumulate"] else 2)),
            tags=("index", "indexing", "inplace", "scatter"), mutated_args=(0,),
            reduce_dim=lambda p: _index_positions(p) + 1 if p["accumulate"] else 1,
            reference_kernel=with_includes("index_put_")),
        aten_op(
            "scatter",
            signature="kernel(x: Tensor, dim: int, index: Tensor, src: Tensor | float) -> Tensor",
            description="torch.scatter(x, dim, index, src) with reduce=None, in both overloads: "
                        "src a tensor (scatter.src) or a Python float (scatter.value). A copy "
                        "of x with out[index[i][j]][j] = src[i][j] (or value) for dim=0, "
                        "out[i][index[i][j]] for dim=1, likewise for any rank; dim may be "
                        "negative. index is int64 of x's rank, entries in [0, x.size(dim)), "
                        "index.size(d) <= src.size(d) for every d and <= x.size(d) for d != dim "
                        "(src may be larger than index; only its index-shaped corner is read). "
                        "The cases never write one position twice, so the result is "
                        "deterministic. x and src may be non-contiguous.",
            reference=_scatter_reference, make_inputs=_scatter_inputs, cases=SCATTER_CASES,
            flops=_no_flops,
            bytes_moved=lambda p, size: _written_bytes(p, size, numel(p["index"]),
                                                       numel(p["index"])),
            tags=("index", "scatter"), reference_kernel=with_includes("scatter")),
        aten_op(
            "scatter_add",
            signature="kernel(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor",
            description="torch.scatter_add(x, dim, index, src): a copy of x with src[i][j] "
                        "ADDED into out[index[i][j]][j] for dim=0 (out[i][index[i][j]] for "
                        "dim=1, likewise for any rank; dim may be negative). index is int64 of "
                        "x's rank with entries in [0, x.size(dim)) that REPEAT, so several "
                        "values meet in one position; index.size(d) <= src.size(d) for every "
                        "d and <= x.size(d) for d != dim. fp16/bf16 sums should be formed in "
                        "fp32 and rounded once. x and src may be non-contiguous.",
            reference=_scatter_add_reference, baseline=_scatter_add_native,
            make_inputs=_scatter_add_inputs, cases=SCATTER_ADD_CASES,
            flops=lambda p: numel(p["index"]),
            bytes_moved=lambda p, size: _written_bytes(p, size, numel(p["index"]),
                                                       numel(p["index"])),
            tags=("index", "scatter", "atomic"),
            reduce_dim=lambda p: p["index"][p["dim"]] + 1,
            reference_kernel=with_includes("scatter_add")),
        aten_op(
            "index_add",
            signature="kernel(x: Tensor, dim: int, index: Tensor, source: Tensor, "
                      "alpha: float) -> Tensor",
            description="torch.index_add(x, dim, index, source, alpha=alpha): a copy of x with "
                        "alpha * source.select(dim, j) ADDED into the slice x.select(dim, "
                        "index[j]) for every j. index is 1-D int64 with entries in "
                        "[0, x.size(dim)) that may repeat; source is x's shape with dim "
                        "replaced by len(index); dim may be negative. fp16/bf16 sums should be "
                        "formed in fp32 and rounded once. x and source may be non-contiguous.",
            reference=_index_add_reference, baseline=_index_add_native,
            make_inputs=_index_add_inputs, cases=INDEX_ADD_CASES,
            flops=lambda p: 2 * _index_add_numel(p),
            bytes_moved=lambda p, size: _written_bytes(p, size, p["n_index"],
                                                       _index_add_numel(p)),
            tags=("index", "scatter", "atomic"),
            reduce_dim=lambda p: p["n_index"] + 1,
            reference_kernel=with_includes("index_add")),
    ]
