"""Reduction ATen operators along one dim (sum, mean, amax, argmax) and the cumsum scan.

Every operator here is ``kernel(x, dim)`` with keepdim=False. The small cases reduce the last
dim, the first dim of a transposed (non-contiguous) view, the middle dim of a 3-D tensor, and a
negative dim over a row longer than one 1024-element block, all with sizes that are no multiple
of any block, so a kernel that assumes contiguity, a last dim or one block fails on CPU already.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import (LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance,
                                 dtype_itemsize)

from kgb_sources.aten._build import FLOATS, aten_op, numel

# The published grid's REDUCTION_SHAPES include (200, 40999, 3) (see
# shared/inventory/kernelgenbench-facts.md, section 4): a long, prime-ish middle dim.
REDUCTION_CASES = (
    ShapeCase("last_dim", {"shape": (37, 129), "dim": 1}),
    ShapeCase("first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True}),
    ShapeCase("middle_dim_3d", {"shape": (3, 61, 17), "dim": 1}),
    ShapeCase("long_row_negative_dim", {"shape": (5, 2053), "dim": -1}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (43, 6, 7), "dim": 0}, heldout=True),
    ShapeCase("llm_rows", {"shape": (4096, 4096), "dim": -1}, tier=LARGE),
    ShapeCase("long_middle_dim", {"shape": (200, 40999, 3), "dim": 1}, tier=LARGE),
)

# randn almost never ties at the maximum, so two of argmax's cases draw small integers: many
# ties inside a block, and (on the long row) across blocks, where the first must still win.
ARGMAX_CASES = (
    ShapeCase("last_dim_ties", {"shape": (37, 129), "dim": 1, "ties": True}),
    ShapeCase("first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True}),
    ShapeCase("middle_dim_3d", {"shape": (3, 61, 17), "dim": 1}),
    ShapeCase("long_row_ties_negative_dim", {"shape": (5, 2053), "dim": -1, "ties": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d_ties", {"shape": (47, 6, 7), "dim": 0, "ties": True},
              heldout=True),
    ShapeCase("llm_rows", {"shape": (4096, 4096), "dim": -1}, tier=LARGE),
    ShapeCase("long_middle_dim", {"shape": (200, 40999, 3), "dim": 1}, tier=LARGE),
)

SCAN_CASES = (
    ShapeCase("last_dim", {"shape": (37, 129), "dim": 1}),
    ShapeCase("first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True}),
    ShapeCase("middle_dim_3d", {"shape": (3, 61, 17), "dim": 1}),
    ShapeCase("long_row_negative_dim", {"shape": (5, 2053), "dim": -1}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (29, 9, 7), "dim": 0}, heldout=True),
    ShapeCase("long_sequence", {"shape": (64, 32768), "dim": 1}, tier=LARGE),
    ShapeCase("middle_dim_scan", {"shape": (16, 4096, 64), "dim": 1}, tier=LARGE),
)


def reduced_length(params: Mapping[str, Any]) -> int:
    """The size of the reduced (or scanned) dim: the terms behind each output element."""
    shape = tuple(params["shape"])
    return shape[params["dim"]]


def reduced_numel(params: Mapping[str, Any]) -> int:
    """Elements of the output of a keepdim=False reduction: the input's, less the reduced dim."""
    shape = list(params["shape"])
    del shape[params["dim"]]
    return numel(shape)


def _reduced_output_bytes(params: Mapping[str, Any], itemsize: int) -> int:
    return reduced_numel(params) * itemsize


def _index_output_bytes(params: Mapping[str, Any], _itemsize: int) -> int:
    return reduced_numel(params) * dtype_itemsize("int64")


def _scan_output_bytes(params: Mapping[str, Any], itemsize: int) -> int:
    return numel(params["shape"]) * itemsize


def _along_dim_inputs(ctx: InputContext) -> list[Any]:
    """``[x, dim]`` for one case: x of the case's shape, as a permuted view when "transposed"
    (so its reduced dim is not laid out where a naive kernel expects), and drawn from
    {-2, ..., 2} when "ties" (so the maximum repeats); otherwise standard normal.
    """
    shape = tuple(ctx.params["shape"])
    transposed = bool(ctx.params.get("transposed"))
    stored = shape[::-1] if transposed else shape
    if ctx.params.get("ties"):
        x = ctx.randint(*stored, low=-2, high=3, dtype=ctx.dtype)
    else:
        x = ctx.randn(*stored)
    if transposed:
        x = x.permute(*reversed(range(x.dim())))
    return [x, int(ctx.params["dim"])]


def _torch_along_dim(name: str) -> Callable[[Any, int], Any]:
    def call(x, dim):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, name)(x, dim)

    call.__name__ = f"torch_{name}"
    return call


def _cumsum_reference(x, dim):  # noqa: ANN001, ANN202
    """torch.cumsum accumulated in fp32 for fp16/bf16 inputs, then rounded to x's dtype.

    torch's own CUDA cumsum accumulates fp16/bf16 in the storage dtype (measured on an H200,
    torch 2.11: max error 3.5 in fp16 and 27 in bf16 over 4096 terms), so a kernel that follows
    the fp32 rule would fail against it on GPUs while passing on CPU. The published tests take
    this reference in float64 (``to_reference(inp, True)``); fp32 is as good at these
    tolerances. Timing compares against plain ``torch.cumsum`` (the spec's ``baseline``), the
    native call a user would otherwise make.
    """
    import torch

    if x.dtype in (torch.float16, torch.bfloat16):
        return torch.cumsum(x, dim, dtype=torch.float32).to(x.dtype)
    return torch.cumsum(x, dim)


def _along_dim_op(name: str, *, description: str, cases: tuple[ShapeCase, ...],
                  output_bytes: Callable[[Mapping[str, Any], int], int],
                  tags: tuple[str, ...] = ("reduction",),
                  reference: Callable[[Any, int], Any] | None = None,
                  baseline: Callable[[Any, int], Any] | None = None,
                  scaled_atol: bool = True, exact: bool = False) -> OperatorSpec:
    """One ``kernel(x: Tensor, dim: int)`` operator with the shared inputs and counts.

    The reference is ``torch.<name>(x, dim)`` unless given, and so is the timing baseline;
    ``scaled_atol`` gives atol = 1e-4 x the reduced length, for results that accumulate that
    many terms; ``exact`` demands bit-equality, for results that are one of the inputs.
    """
    return aten_op(
        name,
        signature="kernel(x: Tensor, dim: int) -> Tensor",
        description=description + " dim may be negative; x may be non-contiguous.",
        reference=reference or _torch_along_dim(name),
        make_inputs=_along_dim_inputs,
        cases=cases,
        flops=lambda p: numel(p["shape"]),
        bytes_moved=lambda p, size: numel(p["shape"]) * size + output_bytes(p, size),
        tags=tags,
        reduce_dim=reduced_length if scaled_atol else None,
        tolerance_overrides={d: Tolerance(rtol=0.0, atol=0.0) for d in FLOATS} if exact else None,
        baseline=baseline,
    )


def operators() -> list[OperatorSpec]:
    return [
        _along_dim_op(
            "sum", cases=REDUCTION_CASES, output_bytes=_reduced_output_bytes,
            description="torch.sum(x, dim): the sum of x over dim, keepdim=False (dim is removed "
                        "from the shape); the output has x's dtype, and fp16/bf16 should be "
                        "accumulated in fp32."),
        # Not scaled: a mean divides its accumulated error by the length, and its values shrink
        # like 1/sqrt(length), so atol = 1e-4 x length would accept a mean divided by length-1.
        # FlagGems' mean tests (which KernelGenBench's ATen tests follow) use the plain atol.
        _along_dim_op(
            "mean", cases=REDUCTION_CASES, output_bytes=_reduced_output_bytes, scaled_atol=False,
            description="torch.mean(x, dim): the sum of x over dim divided by x.shape[dim], "
                        "keepdim=False (dim is removed from the shape); the output has x's "
                        "dtype, and fp16/bf16 should be accumulated in fp32."),
        # The maximum is one of the inputs, so it is checked exactly, as FlagGems' max tests do.
        _along_dim_op(
            "amax", cases=REDUCTION_CASES, output_bytes=_reduced_output_bytes, exact=True,
            description="torch.amax(x, dim): the maximum of x over dim, keepdim=False (dim is "
                        "removed from the shape), in x's dtype; inputs are finite, and the "
                        "result must equal the maximal input exactly."),
        _along_dim_op(
            "argmax", cases=ARGMAX_CASES, output_bytes=_index_output_bytes,
            description="torch.argmax(x, dim): the int64 index along dim of the maximum of x, "
                        "keepdim=False (dim is removed from the shape); when several elements "
                        "tie for the maximum, the FIRST (smallest) index, as torch returns; "
                        "inputs are finite."),
        _along_dim_op(
            "cumsum", cases=SCAN_CASES, tags=("scan",), output_bytes=_scan_output_bytes,
            reference=_cumsum_reference, baseline=_torch_along_dim("cumsum"),
            description="torch.cumsum(x, dim): the inclusive prefix sum along dim, out[..., i, "
                        "...] = x[..., 0, ...] + ... + x[..., i, ...]; same shape and dtype as x, "
                        "and fp16/bf16 should be accumulated in fp32."),
    ]
