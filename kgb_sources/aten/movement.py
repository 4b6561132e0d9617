"""Data movement: views, joins, splits, tiling, flips, rolls, padding and triangles.

Views as materialising copies. ATen returns a *view* for t, narrow, select, as_strided, expand,
expand_as, reshape (when it can), unsqueeze and permute: no kernel runs, so there would be
nothing to benchmark, and kgb's checker rejects an output that shares memory with an input
(verdict ``output_aliases_input``). Each of these ops is therefore specified as its
materialising copy: ``kernel(...)`` returns a new contiguous tensor equal to ``x.<op>(...)``,
and the reference returns a fresh tensor too (``.clone(memory_format=contiguous)``).

Every op here moves values without arithmetic (tril/triu and padding write zeros or a constant),
so a right kernel is bitwise equal to the reference; the default dtype tolerance applies, as
for every op. Inputs are given non-contiguous (transposed, strided, channels-last) in some cases,
so a kernel must read with strides rather than assume a layout.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, from_template, kernel_file, numel

INCLUDE = re.compile(r"^# __INCLUDE (\w+)__\n", re.MULTILINE)


def with_includes(name: str) -> Callable[[], str]:
    """``kernels/<name>.py`` with each ``# __INCLUDE <file>__`` line replaced by the text of
    ``kernels/<file>.py`` (a shared kernel, such as ``_strided_copy``), so that each op's file
    holds only its own wrapper and a candidate file stays one self-contained module."""

    def render() -> str:
        text = kernel_file(name)
        if not INCLUDE.search(text):
            raise KeyError(f"kernel {name} includes nothing")
        return INCLUDE.sub(lambda match: kernel_file(match.group(1)), text)

    return render


# -- inputs ----------------------------------------------------------------------------------
LAYOUTS = ("contiguous", "transposed", "strided", "channels_last")


def tensor(ctx: InputContext, shape: Sequence[int], layout: str = "contiguous") -> Any:
    """A normal tensor of logical ``shape`` laid out as ``layout``:

    - ``transposed``: the reversed-dims permute of a contiguous tensor of the reversed shape
      (column-major for 2-D);
    - ``strided``: every other element of the last dim of a tensor twice as wide;
    - ``channels_last``: a 4-D (N, C, H, W) tensor stored as (N, H, W, C).
    """
    shape = tuple(shape)
    if layout == "transposed":
        return ctx.randn(*shape[::-1]).permute(*reversed(range(len(shape))))
    if layout == "strided":
        return ctx.randn(*shape[:-1], 2 * shape[-1])[..., ::2]
    if layout == "channels_last":
        n, c, h, w = shape
        return ctx.randn(n, h, w, c).permute(0, 3, 1, 2)
    if layout != "contiguous":
        raise ValueError(f"unknown layout {layout!r}")
    return ctx.randn(*shape)


def _x(ctx: InputContext) -> Any:
    return tensor(ctx, ctx.params["x"], ctx.params.get("layout", "contiguous"))


def _no_flops(_params: Mapping[str, Any]) -> float:
    return 0.0


def _copy_bytes(output_numel: Callable[[Mapping[str, Any]], int],
                input_numel: Callable[[Mapping[str, Any]], int] | None = None
                ) -> Callable[[Mapping[str, Any], int], float]:
    """Each output element written once, each input element read once (input_numel defaults
    to the output's: a copy of a view reads what it writes)."""
    reads = input_numel or output_numel
    return lambda p, size: float((output_numel(p) + reads(p)) * size)


def _out_numel_of_x(p: Mapping[str, Any]) -> int:
    return numel(p["x"])


def _fresh(value: Any) -> Any:
    """A new contiguous tensor (or list of them) with value's contents: what the materialising
    copy of a view returns, never sharing the input's memory."""
    import torch

    if isinstance(value, (list, tuple)):
        return [_fresh(v) for v in value]
    return value.clone(memory_format=torch.contiguous_format)


VIEW_NOTE = (" ATen returns a view; here kernel(...) must return a NEW contiguous tensor equal "
             "to it (a view launches no kernel, so there would be nothing to benchmark, and an "
             "output sharing memory with an input is rejected).")
STRIDES_NOTE = " x may be non-contiguous (transposed, strided or channels-last)."


# -- cases -----------------------------------------------------------------------------------
T_CASES = (
    ShapeCase("odd", {"x": (37, 29)}),
    ShapeCase("one_row", {"x": (1, 53)}),
    ShapeCase("transposed_input", {"x": (29, 41), "layout": "transposed"}),
    ShapeCase("strided_input", {"x": (17, 23), "layout": "strided"}),
    ShapeCase("heldout_strided", {"x": (45, 19), "layout": "strided"}, heldout=True),
    ShapeCase("square_4k", {"x": (4096, 4096)}, tier=LARGE),
    ShapeCase("weight_14336x4096", {"x": (14336, 4096)}, tier=LARGE),
)

NARROW_CASES = (
    ShapeCase("rows", {"x": (37, 29), "dim": 0, "start": 5, "length": 20}),
    ShapeCase("columns_negative_start", {"x": (13, 40), "dim": 1, "start": -17, "length": 9}),
    ShapeCase("middle_3d_negative_dim", {"x": (5, 17, 11), "dim": -2, "start": 3, "length": 11}),
    ShapeCase("transposed", {"x": (24, 31), "dim": 1, "start": 7, "length": 13,
                             "layout": "transposed"}),
    ShapeCase("heldout_last_dim_3d", {"x": (6, 9, 19), "dim": 2, "start": 4, "length": 12},
              heldout=True),
    ShapeCase("half_columns", {"x": (4096, 8192), "dim": 1, "start": 1024, "length": 4096},
              tier=LARGE),
    ShapeCase("kv_prefix", {"x": (16, 4096, 128), "dim": 1, "start": 0, "length": 2048},
              tier=LARGE),
)

SELECT_CASES = (
    ShapeCase("row", {"x": (37, 29), "dim": 0, "index": 5}),
    ShapeCase("last_column", {"x": (13, 40), "dim": 1, "index": -1}),
    ShapeCase("middle_3d_negative_dim", {"x": (5, 17, 11), "dim": -2, "index": 9}),
    ShapeCase("transposed_negative_index", {"x": (24, 31), "dim": 0, "index": -3,
                                            "layout": "transposed"}),
    ShapeCase("heldout_last_dim_3d", {"x": (6, 9, 19), "dim": 2, "index": 11}, heldout=True),
    ShapeCase("last_token", {"x": (64, 4096, 128), "dim": 1, "index": -1}, tier=LARGE),
    ShapeCase("channel", {"x": (32, 64, 224, 224), "dim": 1, "index": 17}, tier=LARGE),
)

# select_backward: "x" is input_sizes; grad has input_sizes without dim.
SELECT_BACKWARD_CASES = (
    ShapeCase("row", {"x": (37, 29), "dim": 0, "index": 5}),
    ShapeCase("last_column", {"x": (13, 40), "dim": 1, "index": -1}),
    ShapeCase("middle_3d_negative_dim", {"x": (5, 17, 11), "dim": -2, "index": 9}),
    ShapeCase("transposed_grad", {"x": (6, 24, 31), "dim": 0, "index": -3,
                                  "layout": "transposed"}),
    ShapeCase("heldout_last_dim_3d", {"x": (6, 9, 19), "dim": 2, "index": 11}, heldout=True),
    ShapeCase("last_token", {"x": (16, 2048, 4096), "dim": 1, "index": -1}, tier=LARGE),
    ShapeCase("head", {"x": (8, 32, 2048, 128), "dim": 1, "index": 7}, tier=LARGE),
)

# as_strided on a contiguous base of shape "base": windows that overlap, a transpose, a stride-0
# broadcast, all with a storage offset.
AS_STRIDED_CASES = (
    ShapeCase("overlapping_windows", {"base": (200,), "size": (50, 31), "stride": (3, 1),
                                      "storage_offset": 7}),
    ShapeCase("transpose", {"base": (37, 29), "size": (29, 37), "stride": (1, 29),
                            "storage_offset": 0}),
    ShapeCase("strided_3d", {"base": (5, 17, 11), "size": (4, 6, 5), "stride": (150, 11, 2),
                             "storage_offset": 13}),
    ShapeCase("broadcast_rows", {"base": (64,), "size": (7, 13), "stride": (0, 3),
                                 "storage_offset": 5}),
    ShapeCase("heldout_3d", {"base": (30, 40), "size": (9, 11, 4), "stride": (101, 3, 40),
                             "storage_offset": 2}, heldout=True),
    ShapeCase("transpose_4k", {"base": (4096, 4096), "size": (4096, 4096), "stride": (1, 4096),
                               "storage_offset": 0}, tier=LARGE),
    # 8177 windows of 128 at step 8 end exactly at each row's last element (8176 * 8 + 127).
    ShapeCase("sliding_windows", {"base": (32, 65536), "size": (32, 8177, 128),
                                  "stride": (65536, 8, 1), "storage_offset": 0}, tier=LARGE),
)

# expand: "x" shape and target "sizes" (-1 keeps a dim).
EXPAND_CASES = (
    ShapeCase("rows", {"x": (1, 29), "sizes": (37, -1)}),
    ShapeCase("new_and_unit_dims", {"x": (13, 1, 7), "sizes": (2, 13, 5, 7)}),
    ShapeCase("vector_to_3d", {"x": (41,), "sizes": (3, 5, 41)}),
    ShapeCase("strided_middle", {"x": (17, 1, 9), "sizes": (-1, 6, -1), "layout": "strided"}),
    ShapeCase("heldout_two_unit_dims", {"x": (5, 1, 1), "sizes": (4, -1, 3, 7)}, heldout=True),
    ShapeCase("bias_rows", {"x": (1, 4096), "sizes": (4096, 4096)}, tier=LARGE),
    ShapeCase("kv_heads", {"x": (8, 1, 2048, 128), "sizes": (8, 32, 2048, 128)}, tier=LARGE),
)

ROT90_CASES = (
    ShapeCase("k1", {"x": (37, 29), "k": 1, "dims": (0, 1)}),
    ShapeCase("k2_transposed", {"x": (13, 40), "k": 2, "dims": (0, 1), "layout": "transposed"}),
    ShapeCase("k3_last_dims_3d", {"x": (5, 17, 11), "k": 3, "dims": (1, 2)}),
    ShapeCase("k_minus1_4d", {"x": (3, 4, 13, 7), "k": -1, "dims": (2, 3)}),
    ShapeCase("heldout_reversed_dims", {"x": (6, 9, 19), "k": 1, "dims": (2, 0)}, heldout=True),
    ShapeCase("square_4k", {"x": (4096, 4096), "k": 1, "dims": (0, 1)}, tier=LARGE),
    ShapeCase("images", {"x": (8, 64, 224, 224), "k": 1, "dims": (2, 3)}, tier=LARGE),
)

RESHAPE_CASES = (
    ShapeCase("transposed_2d", {"x": (37, 29), "shape": (29, 37), "layout": "transposed"}),
    ShapeCase("strided_to_4d", {"x": (12, 35), "shape": (4, 3, 5, 7), "layout": "strided"}),
    ShapeCase("permuted_3d_infer", {"x": (5, 17, 11), "shape": (-1, 11),
                                    "layout": "transposed"}),
    ShapeCase("channels_last_flat", {"x": (2, 3, 7, 5), "shape": (-1,),
                                     "layout": "channels_last"}),
    ShapeCase("heldout_transposed", {"x": (9, 14), "shape": (7, -1, 3), "layout": "transposed"},
              heldout=True),
    ShapeCase("transposed_4k", {"x": (4096, 4096), "shape": (64, 64, 4096),
                                "layout": "transposed"}, tier=LARGE),
    ShapeCase("nhwc_to_flat", {"x": (8, 64, 56, 56), "shape": (8, 64, 3136),
                               "layout": "channels_last"}, tier=LARGE),
)

UNSQUEEZE_CASES = (
    ShapeCase("first", {"x": (37, 29), "dim": 0}),
    ShapeCase("last_transposed", {"x": (13, 40), "dim": -1, "layout": "transposed"}),
    ShapeCase("middle_strided", {"x": (5, 17, 11), "dim": 2, "layout": "strided"}),
    ShapeCase("vector", {"x": (41,), "dim": 1}),
    ShapeCase("heldout_negative_dim", {"x": (6, 9, 19), "dim": -2, "layout": "transposed"},
              heldout=True),
    ShapeCase("transposed_4k", {"x": (4096, 4096), "dim": 1, "layout": "transposed"},
              tier=LARGE),
    ShapeCase("channels_last", {"x": (8, 64, 56, 56), "dim": 2, "layout": "channels_last"},
              tier=LARGE),
)

PERMUTE_CASES = (
    ShapeCase("swap_2d", {"x": (37, 29), "dims": (1, 0)}),
    ShapeCase("rotate_3d", {"x": (5, 17, 11), "dims": (2, 0, 1)}),
    ShapeCase("nchw_to_nhwc", {"x": (3, 4, 13, 7), "dims": (0, 2, 3, 1)}),
    ShapeCase("transposed_negative_dims", {"x": (13, 40), "dims": (-1, 0),
                                           "layout": "transposed"}),
    ShapeCase("heldout_3d", {"x": (6, 5, 19), "dims": (1, 2, 0)}, heldout=True),
    ShapeCase("nchw_to_nhwc_large", {"x": (8, 64, 56, 56), "dims": (0, 2, 3, 1)}, tier=LARGE),
    ShapeCase("attention_heads", {"x": (16, 1024, 32, 128), "dims": (0, 2, 1, 3)}, tier=LARGE),
)

FLIP_CASES = (
    ShapeCase("rows", {"x": (37, 29), "dims": (0,)}),
    ShapeCase("last_dim", {"x": (13, 40), "dims": (-1,)}),
    ShapeCase("two_dims_3d", {"x": (5, 17, 11), "dims": (0, 2)}),
    ShapeCase("transposed_both", {"x": (24, 31), "dims": (0, 1), "layout": "transposed"}),
    ShapeCase("heldout_middle", {"x": (6, 9, 19), "dims": (1,)}, heldout=True),
    ShapeCase("columns_4k", {"x": (4096, 4096), "dims": (1,)}, tier=LARGE),
    ShapeCase("images_hw", {"x": (8, 64, 224, 224), "dims": (2, 3)}, tier=LARGE),
)

REPEAT_CASES = (
    ShapeCase("tile_2d", {"x": (37, 29), "repeats": (2, 3)}),
    ShapeCase("vector_new_dim", {"x": (13,), "repeats": (3, 2)}),
    ShapeCase("transposed_3d", {"x": (5, 17, 11), "repeats": (1, 2, 3), "layout": "transposed"}),
    ShapeCase("strided_new_dim", {"x": (4, 7), "repeats": (2, 1, 3), "layout": "strided"}),
    ShapeCase("heldout_new_dim", {"x": (6, 9), "repeats": (3, 2, 2)}, heldout=True),
    ShapeCase("tile_4x4", {"x": (1024, 1024), "repeats": (4, 4)}, tier=LARGE),
    ShapeCase("gqa_kv", {"x": (8, 1, 2048, 128), "repeats": (1, 8, 1, 1)}, tier=LARGE),
)

# cat/stack: "shapes" and "layouts" of the members.
CAT_CASES = (
    ShapeCase("rows", {"shapes": ((37, 29), (12, 29), (1, 29)), "dim": 0}),
    ShapeCase("last_dim_transposed_member", {"shapes": ((13, 7), (13, 40), (13, 3)), "dim": -1,
                                             "layouts": ("contiguous", "transposed",
                                                         "contiguous")}),
    ShapeCase("middle_3d_strided_member", {"shapes": ((5, 17, 11), (5, 4, 11)), "dim": 1,
                                           "layouts": ("strided", "contiguous")}),
    ShapeCase("four_members_4d", {"shapes": ((3, 4, 13, 7), (3, 4, 2, 7), (3, 4, 9, 7),
                                             (3, 4, 1, 7)), "dim": 2}),
    ShapeCase("heldout_last_dim", {"shapes": ((6, 5, 19), (6, 5, 2), (6, 5, 23)), "dim": -1,
                                   "layouts": ("contiguous", "transposed", "strided")},
              heldout=True),
    ShapeCase("columns_4x1024", {"shapes": ((4096, 1024),) * 4, "dim": 1}, tier=LARGE),
    ShapeCase("kv_cache_append", {"shapes": ((8, 32, 1024, 128), (8, 32, 1024, 128)), "dim": 2},
              tier=LARGE),
)

STACK_CASES = (
    ShapeCase("three_rows", {"shapes": ((37, 29),) * 3, "dim": 0}),
    ShapeCase("last_dim_transposed_member", {"shapes": ((13, 40),) * 2, "dim": -1,
                                             "layouts": ("contiguous", "transposed")}),
    ShapeCase("middle_3d", {"shapes": ((5, 17, 11),) * 4, "dim": 1}),
    ShapeCase("vectors", {"shapes": ((41,),) * 5, "dim": 1}),
    ShapeCase("heldout_strided_member", {"shapes": ((6, 9, 7),) * 3, "dim": -2,
                                         "layouts": ("contiguous", "strided", "contiguous")},
              heldout=True),
    ShapeCase("eight_4k", {"shapes": ((4096, 1024),) * 8, "dim": 0}, tier=LARGE),
    ShapeCase("heads", {"shapes": ((16, 1024, 128),) * 32, "dim": 1}, tier=LARGE),
)

SPLIT_CASES = (
    ShapeCase("rows_uneven", {"x": (37, 29), "split_size": 10, "dim": 0}),
    ShapeCase("columns_transposed", {"x": (13, 40), "split_size": 16, "dim": -1,
                                     "layout": "transposed"}),
    ShapeCase("middle_3d", {"x": (5, 17, 11), "split_size": 6, "dim": 1}),
    ShapeCase("strided", {"x": (6, 50), "split_size": 7, "dim": 1, "layout": "strided"}),
    ShapeCase("heldout_first_dim_3d", {"x": (9, 14, 5), "split_size": 4, "dim": 0},
              heldout=True),
    ShapeCase("qkv", {"x": (4096, 12288), "split_size": 4096, "dim": 1}, tier=LARGE),
    ShapeCase("row_chunks", {"x": (8192, 4096), "split_size": 1000, "dim": 0}, tier=LARGE),
)

SPLIT_SIZES_CASES = (
    ShapeCase("rows", {"x": (37, 29), "split_sizes": (10, 20, 7), "dim": 0}),
    ShapeCase("columns_transposed", {"x": (13, 40), "split_sizes": (1, 39), "dim": -1,
                                     "layout": "transposed"}),
    ShapeCase("middle_3d_empty_piece", {"x": (5, 17, 11), "split_sizes": (5, 0, 12), "dim": 1}),
    ShapeCase("strided", {"x": (6, 50), "split_sizes": (7, 30, 13), "dim": 1,
                          "layout": "strided"}),
    ShapeCase("heldout_first_dim_3d", {"x": (9, 14, 5), "split_sizes": (2, 2, 5), "dim": 0},
              heldout=True),
    ShapeCase("gqa_qkv", {"x": (4096, 12288), "split_sizes": (8192, 2048, 2048), "dim": 1},
              tier=LARGE),
    ShapeCase("row_halves", {"x": (16384, 4096), "split_sizes": (1, 8191, 8192), "dim": 0},
              tier=LARGE),
)


# roll: "shifts" and "dims" (empty: roll the flattened tensor).
ROLL_CASES = (
    ShapeCase("one_dim", {"x": (37, 29), "shifts": (5,), "dims": (0,)}),
    ShapeCase("negative_shift_last_dim", {"x": (13, 40), "shifts": (-7,), "dims": (-1,)}),
    ShapeCase("two_dims_transposed_long_shift", {"x": (24, 31), "shifts": (3, -45),
                                                 "dims": (0, 1), "layout": "transposed"}),
    ShapeCase("flattened_3d", {"x": (5, 17, 11), "shifts": (23,), "dims": ()}),
    ShapeCase("heldout_two_dims_strided", {"x": (6, 9, 19), "shifts": (-4, 2), "dims": (2, 0),
                                           "layout": "strided"}, heldout=True),
    ShapeCase("columns_4k", {"x": (4096, 4096), "shifts": (1,), "dims": (1,)}, tier=LARGE),
    ShapeCase("shifted_windows", {"x": (8, 64, 56, 56), "shifts": (-3, -3), "dims": (2, 3)},
              tier=LARGE),
)

# constant_pad_nd: "pad" pairs from the last dim backwards (negative entries crop), "value".
PAD_CASES = (
    ShapeCase("last_dim", {"x": (37, 29), "pad": (3, 5), "value": 0.0}),
    ShapeCase("two_dims_transposed", {"x": (13, 40), "pad": (1, 2, 3, 4), "value": -1.5,
                                      "layout": "transposed"}),
    ShapeCase("crop_and_pad_3d", {"x": (5, 17, 11), "pad": (-2, 3, 0, -4), "value": 2.0}),
    ShapeCase("three_dims_4d", {"x": (3, 4, 13, 7), "pad": (2, 2, 1, 1, 1, 0), "value": 0.5}),
    ShapeCase("heldout_strided", {"x": (6, 9, 19), "pad": (0, 7, 2, 0), "value": -3.0,
                                  "layout": "strided"}, heldout=True),
    ShapeCase("images_hw", {"x": (8, 64, 224, 224), "pad": (1, 1, 1, 1), "value": 0.0},
              tier=LARGE),
    ShapeCase("sequence_to_4096", {"x": (16, 4000, 128), "pad": (0, 0, 0, 96), "value": 0.0},
              tier=LARGE),
)

# tril/triu: "diagonal" 0 (main), > 0 above, < 0 below.
TRIANGLE_CASES = (
    ShapeCase("square", {"x": (37, 37), "diagonal": 0}),
    ShapeCase("wide_above", {"x": (13, 40), "diagonal": 3}),
    ShapeCase("tall_below_transposed", {"x": (31, 24), "diagonal": -2, "layout": "transposed"}),
    ShapeCase("batched_3d_below", {"x": (5, 17, 11), "diagonal": -4}),
    ShapeCase("heldout_batched_4d", {"x": (3, 4, 9, 19), "diagonal": 1}, heldout=True),
    ShapeCase("square_4k", {"x": (4096, 4096), "diagonal": 0}, tier=LARGE),
    ShapeCase("causal_heads", {"x": (16, 2048, 2048), "diagonal": 1}, tier=LARGE),
)

# reflection_pad1d_backward: "x" is the input's shape (C, W) or (N, C, W), "padding" (l, r).
REFLECTION_CASES = (
    ShapeCase("symmetric_2d", {"x": (7, 37), "padding": (3, 3)}),
    ShapeCase("asymmetric_3d", {"x": (2, 5, 29), "padding": (5, 2)}),
    ShapeCase("widest_padding", {"x": (3, 9), "padding": (8, 8)}),
    ShapeCase("transposed_grad", {"x": (4, 6, 23), "padding": (1, 6), "layout": "transposed"}),
    ShapeCase("heldout_3d", {"x": (3, 11, 13), "padding": (4, 12)}, heldout=True),
    ShapeCase("audio_frames", {"x": (32, 512, 4096), "padding": (64, 64)}, tier=LARGE),
    ShapeCase("long_rows", {"x": (8, 256, 16384), "padding": (3, 3)}, tier=LARGE),
)


# -- references ------------------------------------------------------------------------------
def _t_reference(x):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.t(x))


def _narrow_reference(x, dim, start, length):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.narrow(x, dim, start, length))


def _select_reference(x, dim, index):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.select(x, dim, index))


def _select_backward_reference(grad, input_sizes, dim, index):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.select_backward(grad, input_sizes, dim, index)


def _as_strided_reference(x, size, stride, storage_offset):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.as_strided(x, size, stride, storage_offset))


def _expand_reference(x, sizes):  # noqa: ANN001, ANN202
    return _fresh(x.expand(*sizes))


def _expand_as_reference(x, other):  # noqa: ANN001, ANN202
    return _fresh(x.expand_as(other))


def _reshape_reference(x, shape):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.reshape(x, shape))


def _unsqueeze_reference(x, dim):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.unsqueeze(x, dim))


def _permute_reference(x, dims):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.permute(x, dims))


def _flip_reference(x, dims):  # noqa: ANN001, ANN202
    import torch

    return torch.flip(x, dims)


def _rot90_reference(x, k, dims):  # noqa: ANN001, ANN202
    import torch

    return _fresh(torch.rot90(x, k, dims))


def _repeat_reference(x, repeats):  # noqa: ANN001, ANN202
    return x.repeat(*repeats)


def _cat_reference(tensors, dim):  # noqa: ANN001, ANN202
    import torch

    return torch.cat(tensors, dim)


def _stack_reference(tensors, dim):  # noqa: ANN001, ANN202
    import torch

    return torch.stack(tensors, dim)


def _unsafe_split_reference(x, split_size, dim):  # noqa: ANN001, ANN202
    import torch

    return _fresh(list(torch.unsafe_split(x, split_size, dim)))


def _unsafe_split_with_sizes_reference(x, split_sizes, dim):  # noqa: ANN001, ANN202
    import torch

    return _fresh(list(torch.unsafe_split_with_sizes(x, split_sizes, dim)))


def _roll_reference(x, shifts, dims):  # noqa: ANN001, ANN202
    import torch

    return torch.roll(x, shifts, dims)


def _constant_pad_nd_reference(x, pad, value):  # noqa: ANN001, ANN202
    import torch

    return torch.constant_pad_nd(x, pad, value)


def _tril_reference(x, diagonal):  # noqa: ANN001, ANN202
    import torch

    return torch.tril(x, diagonal)


def _triu_reference(x, diagonal):  # noqa: ANN001, ANN202
    import torch

    return torch.triu(x, diagonal)


def _reflection_pad1d_backward_reference(grad_output, x, padding):  # noqa: ANN001, ANN202
    """ATen's reflection_pad1d_backward, added in fp32 for fp16/bf16 and then rounded.

    The CUDA kernel adds the (up to three) terms with atomics in the storage dtype, so its
    fp16/bf16 result depends on their order; fp32 addition is the exact-as-possible truth a
    kernel that follows the fp32 rule is held to. Timing uses the native call (``baseline``).
    """
    import torch

    if grad_output.dtype in (torch.float16, torch.bfloat16):
        return torch.ops.aten.reflection_pad1d_backward(
            grad_output.float(), x.float(), padding).to(grad_output.dtype)
    return torch.ops.aten.reflection_pad1d_backward(grad_output, x, padding)


def _reflection_pad1d_backward_native(grad_output, x, padding):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.reflection_pad1d_backward(grad_output, x, padding)


# -- input factories -------------------------------------------------------------------------
def _params_inputs(*names: str) -> Callable[[InputContext], list[Any]]:
    """``[x, params[name] for name in names]`` (tuples passed as lists, as ATen takes them)."""

    def make(ctx: InputContext) -> list[Any]:
        values = [ctx.params[n] for n in names]
        return [_x(ctx)] + [list(v) if isinstance(v, tuple) else v for v in values]

    return make


def _members(ctx: InputContext) -> list[Any]:
    shapes = ctx.params["shapes"]
    layouts = ctx.params.get("layouts", ("contiguous",) * len(shapes))
    return [[tensor(ctx, s, layout) for s, layout in zip(shapes, layouts)], ctx.params["dim"]]


def _select_backward_inputs(ctx: InputContext) -> list[Any]:
    sizes = list(ctx.params["x"])
    dim = ctx.params["dim"] % len(sizes)
    grad_shape = sizes[:dim] + sizes[dim + 1:]
    grad = tensor(ctx, grad_shape, ctx.params.get("layout", "contiguous"))
    return [grad, sizes, ctx.params["dim"], ctx.params["index"]]


def _as_strided_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [ctx.randn(*p["base"]), list(p["size"]), list(p["stride"]), p["storage_offset"]]


def _expand_as_inputs(ctx: InputContext) -> list[Any]:
    x = _x(ctx)
    target = [x.shape[d - (len(ctx.params["sizes"]) - x.dim())] if s == -1 else s
              for d, s in enumerate(ctx.params["sizes"])]
    return [x, ctx.randn(*target)]


def _reflection_inputs(ctx: InputContext) -> list[Any]:
    shape = list(ctx.params["x"])
    left, right = ctx.params["padding"]
    grad_shape = shape[:-1] + [shape[-1] + left + right]
    grad_output = tensor(ctx, grad_shape, ctx.params.get("layout", "contiguous"))
    return [grad_output, ctx.randn(*shape), [left, right]]


def _padded_numel(p: Mapping[str, Any]) -> int:
    sizes = list(p["x"])
    pad = p["pad"]
    for k in range(len(pad) // 2):
        sizes[-1 - k] += pad[2 * k] + pad[2 * k + 1]
    return numel(sizes)


def _reflection_bytes(p: Mapping[str, Any], size: int) -> float:
    width_out = p["x"][-1] + sum(p["padding"])
    return float((numel(p["x"]) + numel(p["x"]) // p["x"][-1] * width_out) * size)


# -- output sizes, for the counts -------------------------------------------------------------
def _expanded_numel(p: Mapping[str, Any]) -> int:
    lead = len(p["sizes"]) - len(p["x"])
    return numel(p["x"][d - lead] if s == -1 else s for d, s in enumerate(p["sizes"]))


def _repeated_numel(p: Mapping[str, Any]) -> int:
    return numel(p["x"]) * numel(p["repeats"])


def _members_numel(p: Mapping[str, Any]) -> int:
    return sum(numel(s) for s in p["shapes"])


def _narrowed_numel(p: Mapping[str, Any]) -> int:
    return numel(p["x"]) // p["x"][p["dim"]] * p["length"]


def _selected_numel(p: Mapping[str, Any]) -> int:
    return numel(p["x"]) // p["x"][p["dim"]]


def _select_backward_bytes(p: Mapping[str, Any], size: int) -> float:
    return float((numel(p["x"]) + _selected_numel(p)) * size)


def operators() -> list[OperatorSpec]:
    move = ("movement",)
    view = ("movement", "view")

    def view_op(name: str, **fields: Any) -> OperatorSpec:
        """An ATen view op, materialised: its contract is a new contiguous tensor."""
        return aten_op(name, contiguous_output=True, **fields)

    return [
        view_op(
            "t", signature="kernel(x: Tensor) -> Tensor",
            description="torch.t(x) for a 2-D x: the transpose, out[j][i] = x[i][j], shape "
                        "(x.size(1), x.size(0))." + VIEW_NOTE + STRIDES_NOTE,
            reference=_t_reference, make_inputs=lambda ctx: [_x(ctx)], cases=T_CASES,
            flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x), tags=view,
            reference_kernel=with_includes("t")),
        view_op(
            "narrow", signature="kernel(x: Tensor, dim: int, start: int, length: int) -> Tensor",
            description="torch.narrow(x, dim, start, length): the slice start:start+length of "
                        "dim; dim may be negative, and a negative start counts from the end "
                        "(start + x.size(dim))." + VIEW_NOTE + STRIDES_NOTE,
            reference=_narrow_reference, make_inputs=_params_inputs("dim", "start", "length"),
            cases=NARROW_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_narrowed_numel),
            tags=view, reference_kernel=with_includes("narrow")),
        view_op(
            "select", signature="kernel(x: Tensor, dim: int, index: int) -> Tensor",
            description="torch.select(x, dim, index): the slice of x at position index of dim, "
                        "with dim removed from the shape; dim and index may be negative (index "
                        "+ x.size(dim))." + VIEW_NOTE + STRIDES_NOTE,
            reference=_select_reference, make_inputs=_params_inputs("dim", "index"),
            cases=SELECT_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_selected_numel),
            tags=view, reference_kernel=with_includes("select")),
        aten_op(
            "select_backward",
            signature="kernel(grad: Tensor, input_sizes: list[int], dim: int, index: int) "
                      "-> Tensor",
            description="aten::select_backward(grad, input_sizes, dim, index): the gradient of "
                        "x.select(dim, index) for x of shape input_sizes: a new contiguous "
                        "tensor of shape input_sizes, dtype of grad, all zeros except the slice "
                        "at index of dim, which equals grad (grad has input_sizes without dim). "
                        "dim and index may be negative; grad may be non-contiguous.",
            reference=_select_backward_reference, make_inputs=_select_backward_inputs,
            cases=SELECT_BACKWARD_CASES, flops=_no_flops,
            bytes_moved=_select_backward_bytes, tags=("movement", "backward"),
            reference_kernel=with_includes("select_backward")),
        view_op(
            "as_strided",
            signature="kernel(x: Tensor, size: list[int], stride: list[int], "
                      "storage_offset: int) -> Tensor",
            description="torch.as_strided(x, size, stride, storage_offset) on a contiguous x "
                        "(storage offset 0): out[c] = x.flatten()[storage_offset + sum_d c[d] * "
                        "stride[d]] for every coordinate c of size; strides may be 0 and windows "
                        "may overlap, so elements can repeat." + VIEW_NOTE,
            reference=_as_strided_reference,
            make_inputs=_as_strided_inputs, cases=AS_STRIDED_CASES, flops=_no_flops,
            bytes_moved=_copy_bytes(lambda p: numel(p["size"])), tags=view,
            reference_kernel=with_includes("as_strided")),
        view_op(
            "expand", signature="kernel(x: Tensor, sizes: list[int]) -> Tensor",
            description="x.expand(*sizes): x broadcast to sizes; size-1 dims of x are repeated, "
                        "new leading dims may be added, and -1 keeps x's size of that dim."
                        + VIEW_NOTE + STRIDES_NOTE,
            reference=_expand_reference, make_inputs=_params_inputs("sizes"),
            cases=EXPAND_CASES, flops=_no_flops,
            bytes_moved=_copy_bytes(_expanded_numel, _out_numel_of_x), tags=view + ("broadcast",),
            reference_kernel=with_includes("expand")),
        view_op(
            "expand_as", signature="kernel(x: Tensor, other: Tensor) -> Tensor",
            description="x.expand_as(other): x broadcast to other.shape (other's values are not "
                        "read); size-1 dims of x are repeated and new leading dims may be added."
                        + VIEW_NOTE + STRIDES_NOTE,
            reference=_expand_as_reference, make_inputs=_expand_as_inputs, cases=EXPAND_CASES,
            flops=_no_flops, bytes_moved=_copy_bytes(_expanded_numel, _out_numel_of_x),
            tags=view + ("broadcast",), reference_kernel=with_includes("expand_as")),
        view_op(
            "reshape", signature="kernel(x: Tensor, shape: list[int]) -> Tensor",
            description="torch.reshape(x, shape) of a NON-contiguous x (transposed, strided or "
                        "channels-last), where ATen itself copies: x's elements in row-major "
                        "order of its logical shape, as a new contiguous tensor of shape (one "
                        "entry may be -1, inferred). The result must not share memory with x.",
            reference=_reshape_reference, make_inputs=_params_inputs("shape"),
            cases=RESHAPE_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=view, reference_kernel=with_includes("reshape")),
        view_op(
            "unsqueeze", signature="kernel(x: Tensor, dim: int) -> Tensor",
            description="torch.unsqueeze(x, dim): x with a size-1 dim inserted at position dim "
                        "(dim in [-x.dim()-1, x.dim()], negative counts from the end)."
                        + VIEW_NOTE + STRIDES_NOTE,
            reference=_unsqueeze_reference, make_inputs=_params_inputs("dim"),
            cases=UNSQUEEZE_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=view, reference_kernel=with_includes("unsqueeze")),
        view_op(
            "permute", signature="kernel(x: Tensor, dims: list[int]) -> Tensor",
            description="torch.permute(x, dims): out's dim i is x's dim dims[i] (dims may be "
                        "negative)." + VIEW_NOTE + STRIDES_NOTE,
            reference=_permute_reference, make_inputs=_params_inputs("dims"),
            cases=PERMUTE_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=view, reference_kernel=with_includes("permute")),
        aten_op(
            "flip", signature="kernel(x: Tensor, dims: list[int]) -> Tensor",
            description="torch.flip(x, dims): x reversed along every dim in dims, out[.., i, ..] "
                        "= x[.., x.size(d) - 1 - i, ..]; dims may be negative; a new contiguous "
                        "tensor." + STRIDES_NOTE,
            reference=_flip_reference, make_inputs=_params_inputs("dims"), cases=FLIP_CASES,
            flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x), tags=move,
            reference_kernel=with_includes("flip")),
        aten_op(
            "rot90", signature="kernel(x: Tensor, k: int, dims: list[int]) -> Tensor",
            description="torch.rot90(x, k, dims): rotation by 90 degrees k times in the plane of "
                        "the two dims, in the direction from dims[0] towards dims[1]; k is taken "
                        "mod 4 (k=-1 is k=3). As ATen defines it: k=1 is "
                        "x.flip(dims[1]).transpose(dims[0], dims[1]), k=2 is x.flip(dims), k=3 "
                        "is x.flip(dims[0]).transpose(dims[0], dims[1]). A new contiguous tensor."
                        + STRIDES_NOTE,
            reference=_rot90_reference, make_inputs=_params_inputs("k", "dims"),
            cases=ROT90_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=move, reference_kernel=with_includes("rot90")),
        aten_op(
            "repeat", signature="kernel(x: Tensor, repeats: list[int]) -> Tensor",
            description="x.repeat(*repeats): x tiled repeats[d] times along each dim; "
                        "len(repeats) >= x.dim(), and extra leading entries add new leading "
                        "dims. Output shape [repeats[d] * size[d]] with size padded by leading "
                        "1s; out[c] = x[c[d] % size[d] ...]." + STRIDES_NOTE,
            reference=_repeat_reference, make_inputs=_params_inputs("repeats"),
            cases=REPEAT_CASES, flops=_no_flops,
            bytes_moved=_copy_bytes(_repeated_numel, _out_numel_of_x), tags=move,
            reference_kernel=with_includes("repeat")),
        aten_op(
            "cat", signature="kernel(tensors: list[Tensor], dim: int) -> Tensor",
            description="torch.cat(tensors, dim): the members joined along dim (may be "
                        "negative), as a new contiguous tensor; members have the same rank and "
                        "dtype and equal sizes except along dim. Members may be non-contiguous "
                        "(transposed or strided), each with its own strides.",
            reference=_cat_reference, make_inputs=_members, cases=CAT_CASES, flops=_no_flops,
            bytes_moved=_copy_bytes(_members_numel), tags=("movement", "join"),
            reference_kernel=with_includes("cat")),
        aten_op(
            "stack", signature="kernel(tensors: list[Tensor], dim: int) -> Tensor",
            description="torch.stack(tensors, dim): same-shape members joined along a NEW dim "
                        "inserted at dim (dim in [-rank-1, rank]), out.select(dim, k) = "
                        "tensors[k]; a new contiguous tensor. Members may be non-contiguous.",
            reference=_stack_reference, make_inputs=_members, cases=STACK_CASES,
            flops=_no_flops, bytes_moved=_copy_bytes(_members_numel), tags=("movement", "join"),
            reference_kernel=with_includes("stack")),
        aten_op(
            "unsafe_split",
            signature="kernel(x: Tensor, split_size: int, dim: int) -> list[Tensor]",
            description="torch.unsafe_split(x, split_size, dim): x cut along dim into pieces of "
                        "split_size elements (the last one shorter when split_size does not "
                        "divide x.size(dim)), returned as a list. ATen returns views; here each "
                        "piece must be a NEW contiguous tensor (none sharing memory with x)."
                        + STRIDES_NOTE,
            reference=_unsafe_split_reference, make_inputs=_params_inputs("split_size", "dim"),
            cases=SPLIT_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=("movement", "split"), reference_kernel=with_includes("unsafe_split")),
        aten_op(
            "unsafe_split_with_sizes",
            signature="kernel(x: Tensor, split_sizes: list[int], dim: int) -> list[Tensor]",
            description="torch.unsafe_split_with_sizes(x, split_sizes, dim): x cut along dim "
                        "into consecutive pieces of the given sizes (they sum to x.size(dim); a "
                        "size may be 0, giving an empty piece), returned as a list. ATen returns "
                        "views; here each piece must be a NEW contiguous tensor (none sharing "
                        "memory with x)." + STRIDES_NOTE,
            reference=_unsafe_split_with_sizes_reference,
            make_inputs=_params_inputs("split_sizes", "dim"), cases=SPLIT_SIZES_CASES,
            flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=("movement", "split"),
            reference_kernel=with_includes("unsafe_split_with_sizes")),
        aten_op(
            "roll", signature="kernel(x: Tensor, shifts: list[int], dims: list[int]) -> Tensor",
            description="torch.roll(x, shifts, dims): along each dims[k], out[.., i, ..] = "
                        "x[.., (i - shifts[k]) mod size, ..] (a positive shift moves elements "
                        "towards higher indices; shifts may be negative or longer than the dim; "
                        "dims may be negative). With dims empty ([]), x is rolled as if "
                        "flattened in row-major order by shifts[0], then restored to its shape. "
                        "A new contiguous tensor." + STRIDES_NOTE,
            reference=_roll_reference, make_inputs=_params_inputs("shifts", "dims"),
            cases=ROLL_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=move),
        aten_op(
            "constant_pad_nd",
            signature="kernel(x: Tensor, pad: list[int], value: float) -> Tensor",
            description="torch.constant_pad_nd(x, pad, value) (= F.pad mode='constant'): pad "
                        "holds (before, after) pairs for the last dim, then the one before it, "
                        "and so on; out[c] = x[c - before] where that lies inside x, else value. "
                        "Negative pads crop. A new contiguous tensor of x's dtype." + STRIDES_NOTE,
            reference=_constant_pad_nd_reference,
            make_inputs=_params_inputs("pad", "value"), cases=PAD_CASES, flops=_no_flops,
            bytes_moved=_copy_bytes(_padded_numel, _out_numel_of_x), tags=("movement", "pad")),
        aten_op(
            "tril", signature="kernel(x: Tensor, diagonal: int) -> Tensor",
            description="torch.tril(x, diagonal): the lower triangle of each matrix in x's last "
                        "two dims (batch dims in front): out[.., i, j] = x[.., i, j] if j - i <= "
                        "diagonal else 0; diagonal 0 is the main diagonal, > 0 above it, < 0 "
                        "below. A new contiguous tensor." + STRIDES_NOTE,
            reference=_tril_reference, make_inputs=_params_inputs("diagonal"),
            cases=TRIANGLE_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=("movement", "triangle"),
            reference_kernel=from_template("triangle", name="tril",
                                           keep="(j - i) <= diagonal")),
        aten_op(
            "triu", signature="kernel(x: Tensor, diagonal: int) -> Tensor",
            description="torch.triu(x, diagonal): the upper triangle of each matrix in x's last "
                        "two dims (batch dims in front): out[.., i, j] = x[.., i, j] if j - i >= "
                        "diagonal else 0; diagonal 0 is the main diagonal, > 0 above it, < 0 "
                        "below. A new contiguous tensor." + STRIDES_NOTE,
            reference=_triu_reference, make_inputs=_params_inputs("diagonal"),
            cases=TRIANGLE_CASES, flops=_no_flops, bytes_moved=_copy_bytes(_out_numel_of_x),
            tags=("movement", "triangle"),
            reference_kernel=from_template("triangle", name="triu",
                                           keep="(j - i) >= diagonal")),
        aten_op(
            "reflection_pad1d_backward",
            signature="kernel(grad_output: Tensor, input: Tensor, padding: list[int]) -> Tensor",
            description="aten::reflection_pad1d_backward(grad_output, input, padding): the "
                        "gradient of F.pad(input, padding, mode='reflect') for input (C, W) or "
                        "(N, C, W) and padding (left, right), each < W; grad_output has width "
                        "W + left + right. Output: input's shape, grad_output's dtype; input j "
                        "gets the sum of grad_output at every padded position that reads it "
                        "(j + left, and its mirror images at the edges: up to three terms, to "
                        "be added in fp32). input's values are not read; grad_output may be "
                        "non-contiguous.",
            reference=_reflection_pad1d_backward_reference,
            baseline=_reflection_pad1d_backward_native,
            make_inputs=_reflection_inputs, cases=REFLECTION_CASES, flops=lambda p: numel(p["x"]),
            bytes_moved=_reflection_bytes, tags=("movement", "pad", "backward"),
            reduce_dim=lambda p: 3),
    ]
