"""Reduction ATen operators along one dim (sum, mean, amax, amin, prod, argmax, argmin,
logsumexp, var, std, norm) and the cumsum and cumprod scans.

Every operator here is ``kernel(x, dim)`` with keepdim=False. The small cases reduce the last
dim, the first dim of a transposed (non-contiguous) view, the middle dim of a 3-D tensor, and a
negative dim over a row longer than one 1024-element block, all with sizes that are no multiple
of any block, so a kernel that assumes contiguity, a last dim or one block fails on CPU already.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from kgb_core.operators import (DEFAULT_RTOL, LARGE, InputContext, OperatorSpec, Rounded,
                                 ShapeCase, Tolerance, dtype_itemsize)

from kgb_sources.aten._build import FLOATS, aten_op, from_template, numel

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


# prod and cumprod multiply up to 2053 terms in the small cases (40999 in the large ones): their
# inputs are +-exp(0.05 z), so the small cases' products stay within fp16's range and a wrong
# sign or a dropped term still shows (see _fp32_product_rtol).
PRODUCT_CASES = tuple(
    ShapeCase(case.name, {**case.params, "near_one": True}, tier=case.tier, heldout=case.heldout)
    for case in REDUCTION_CASES)
CUMPROD_CASES = tuple(
    ShapeCase(case.name, {**case.params, "near_one": True}, tier=case.tier, heldout=case.heldout)
    for case in SCAN_CASES)

# Inputs of scale 50 reach ~125, where exp overflows fp32 (above ~88.7): a logsumexp that does
# not subtract the maximum first returns inf there.
LOGSUMEXP_CASES = REDUCTION_CASES[:4] + (
    ShapeCase("large_magnitude", {"shape": (23, 129), "dim": -1, "scale": 50.0}),
) + REDUCTION_CASES[4:]

# var and std: short rows (where correction=1 and 0 differ most), correction 0, keepdim.
VAR_CASES = (
    ShapeCase("last_dim", {"shape": (37, 13), "dim": 1, "correction": 1, "keepdim": False}),
    ShapeCase("first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True,
                                       "correction": 1, "keepdim": False}),
    ShapeCase("middle_dim_keepdim", {"shape": (3, 61, 17), "dim": 1, "correction": 1,
                                     "keepdim": True}),
    ShapeCase("long_row_biased", {"shape": (5, 2053), "dim": -1, "correction": 0,
                                  "keepdim": False}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (9, 6, 7), "dim": 0, "correction": 1,
                                       "keepdim": False}, heldout=True),
    ShapeCase("llm_rows", {"shape": (4096, 4096), "dim": -1, "correction": 1,
                           "keepdim": False}, tier=LARGE),
    ShapeCase("long_middle_dim", {"shape": (200, 40999, 3), "dim": 1, "correction": 0,
                                  "keepdim": True}, tier=LARGE),
)

NORM_CASES = (
    ShapeCase("l2_last_dim", {"shape": (37, 129), "dim": 1, "ord": 2.0}),
    ShapeCase("l1_first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True,
                                          "ord": 1.0}),
    ShapeCase("l2_middle_dim_3d", {"shape": (3, 61, 17), "dim": 1, "ord": 2.0}),
    ShapeCase("l1_long_row_negative_dim", {"shape": (5, 2053), "dim": -1, "ord": 1.0}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (43, 6, 7), "dim": 0, "ord": 2.0}, heldout=True),
    ShapeCase("llm_rows", {"shape": (4096, 4096), "dim": -1, "ord": 2.0}, tier=LARGE),
    ShapeCase("long_middle_dim", {"shape": (200, 40999, 3), "dim": 1, "ord": 1.0}, tier=LARGE),
)


DIFF_CASES = (
    ShapeCase("default_last_dim", {"shape": (37, 129), "dim": None}),
    ShapeCase("first_dim_transposed", {"shape": (131, 37), "dim": 0, "transposed": True}),
    ShapeCase("middle_dim_3d", {"shape": (3, 61, 17), "dim": 1}),
    ShapeCase("long_row_negative_dim", {"shape": (5, 2053), "dim": -1}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (29, 9, 7), "dim": 0}, heldout=True),
    ShapeCase("llm_rows", {"shape": (4096, 4096), "dim": -1}, tier=LARGE),
    ShapeCase("middle_dim", {"shape": (16, 4096, 64), "dim": 1}, tier=LARGE),
)


def _diff_inputs(ctx: InputContext) -> list[Any]:
    """[x, dim], or just [x] where the case tests the default dim=-1."""
    if ctx.params["dim"] is None:
        return [ctx.randn(*ctx.params["shape"])]
    return _along_dim_inputs(ctx)


def _diff_reference(x, dim=-1):  # noqa: ANN001, ANN202
    import torch

    return torch.diff(x, n=1, dim=dim)


def _diff_numel(p: Mapping[str, Any]) -> int:
    shape = list(p["shape"])
    shape[-1 if p["dim"] is None else p["dim"]] -= 1
    return numel(shape)


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
    elif ctx.params.get("near_one"):
        sign = ctx.randint(*stored, low=0, high=2, dtype=ctx.torch.float32) * 2 - 1
        x = (sign * ctx.randn(*stored, dtype=ctx.torch.float32, scale=0.05).exp()).to(ctx.dtype)
    else:
        x = ctx.randn(*stored, scale=float(ctx.params.get("scale", 1.0)))
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


def _product_float64_reference(name: str) -> Callable[[Any, int], Any]:
    """torch.<name>(x, dim) multiplied in float64 for every input dtype, rounded once to x's.

    torch's CPU prod and cumprod multiply fp16 in fp16 (measured here, torch 2.13: relative
    error 5e-3 over 129 terms, beyond fp16's rtol), so an fp32 kernel would fail against them.
    In fp32 torch's own CUDA scan and reduction round N - 1 times like the kernel does, so the
    two errors added up against each other (on an H200: cumprod long_sequence 1.1e-5 and prod
    long_middle_dim 1.5e-5 relative, both known-good kernels); in float64 the truth is off by
    at most N x 2^-53 before the final rounding, and only the kernel's own error is judged.
    Timing compares against the native call (the spec's ``baseline``). Chips without float64
    (plugins/kgb-backend-ascend, -cambricon, -iluvatar say so) get it computed on the CPU:
    float64 rounding is the same there, and only the result goes back.

    The float64 product comes along (``Rounded``): the large cases' products pass fp16's
    largest value (the log of a prefix is a random walk of N steps of 0.05 z, 9 wide at
    N = 32768 against log 65504 = 11.1), and where one lands within a rounding of the overflow
    threshold a correct kernel returns inf or 65504, either of which the reference may be
    (on an H200, cumprod after timing: truth -65519.93, reference -65504, the kernel -inf).
    """
    def call(x, dim):  # noqa: ANN001, ANN202
        import torch

        product = getattr(torch, name)
        try:
            exact = product(x, dim, dtype=torch.float64)
        except (RuntimeError, TypeError):
            if x.device.type == "cpu":
                raise
            exact = product(x.cpu(), dim, dtype=torch.float64)
        return Rounded(exact.to(x.dtype).to(x.device), unrounded=exact)

    call.__name__ = f"{name}_float64"
    return call


# The fp32 unit roundoff: a multiply rounded to nearest is off by at most this, relatively.
FP32_UNIT_ROUNDOFF = 2.0 ** -24


def _fp32_product_rtol(params: Mapping[str, Any]) -> float:
    """fp32 rtol for a product (or prefix product) of N = reduced_length factors.

    Any evaluation order (a loop, a tree, blocked scans with a carry) multiplies N factors with
    N - 1 roundings, each a factor (1 + d) with |d| <= u = 2^-24, so the relative error is
    about the sum of the d's: (N - 1) u at worst (2.4e-3 at N = 40999), which unbiased rounding
    never approaches. Each d is a rounding error uniform over +-ulp/2, relative to a mantissa m
    in [1, 2): its standard deviation is 2u sqrt(E[1/m^2] / 12) = 0.42u for log-uniform
    mantissas, and the sum's is 0.42u sqrt(N - 1) (5.1e-6 at N = 40999, as measured on these
    inputs in tests/test_product_tolerance.py). rtol = 4u sqrt(N) is 9.4 of those standard
    deviations, far past the largest of 4M independent errors (5.5), and never below the
    published 1e-5: 1e-5 up to N = 1759, 1.08e-5 at 2053, 1.5e-5 at 4096, 4.3e-5 at 32768,
    4.8e-5 at 40999.

    A wrong kernel is off by a whole factor: a factor dropped, repeated or shifted in (an
    off-by-one scan) multiplies the result by x^(+-1) with x = +-exp(0.05 z), which flips the
    sign half the time and otherwise moves it by |1 - x^(+-1)| = 0.05 |z|, below 4.8e-5 only
    for |z| < 1e-3 (probability 8e-4). So each independent output (a row, in a scan) escapes
    with probability at most 4e-4, and every case has at least 5 of them (64 where N > 4096);
    a wrong dim changes every factor.
    """
    length = reduced_length(params)
    return max(DEFAULT_RTOL["float32"], 4 * FP32_UNIT_ROUNDOFF * math.sqrt(length))


def _log_length(params: Mapping[str, Any]) -> int:
    """logsumexp's error grows like its value, log(N) above the maximum (see log_softmax)."""
    return max(1, math.ceil(math.log(reduced_length(params))))


def _stat_inputs(ctx: InputContext) -> list[Any]:
    x, dim = _along_dim_inputs(ctx)
    return [x, dim, int(ctx.params["correction"]), bool(ctx.params["keepdim"])]


def _var_reference(name: str) -> Callable[..., Any]:
    def call(x, dim, correction, keepdim):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, name)(x, dim, correction=correction, keepdim=keepdim)

    call.__name__ = f"torch_{name}"
    return call


def _norm_inputs(ctx: InputContext) -> list[Any]:
    x, dim = _along_dim_inputs(ctx)
    return [x, float(ctx.params["ord"]), dim]


def _norm_reference(x, ord, dim):  # noqa: ANN001, ANN202, A002
    import torch

    return torch.linalg.vector_norm(x, ord, dim)


def _stat_op(name: str, description: str) -> OperatorSpec:
    return aten_op(
        name,
        signature="kernel(x: Tensor, dim: int, correction: int = 1, keepdim: bool = False) "
                  "-> Tensor",
        description=description + " dim may be negative; x may be non-contiguous; the output "
                    "has x's dtype, computed in fp32.",
        reference=_var_reference(name),
        make_inputs=_stat_inputs,
        cases=VAR_CASES,
        flops=lambda p: 3 * numel(p["shape"]),
        bytes_moved=lambda p, size: numel(p["shape"]) * size + _reduced_output_bytes(p, size),
        tags=("reduction", "statistics"),
        # Not scaled: a variance is a mean of squares of unit scale whatever N is, and with
        # atol = 1e-4 x N the 1/N gap between correction 1 and 0 would pass for N >= 100.
        reduce_dim=None,
        reference_kernel=from_template("var_std", op=name,
                                       take_sqrt="True" if name == "std" else "False"),
    )


def _along_dim_op(name: str, *, description: str, cases: tuple[ShapeCase, ...],
                  output_bytes: Callable[[Mapping[str, Any], int], int],
                  tags: tuple[str, ...] = ("reduction",),
                  reference: Callable[[Any, int], Any] | None = None,
                  baseline: Callable[[Any, int], Any] | None = None,
                  scaled_atol: bool = True, exact: bool = False,
                  reduce_dim: Callable[[Mapping[str, Any]], int] | None = None,
                  rtol_per_case: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None,
                  ) -> OperatorSpec:
    """One ``kernel(x: Tensor, dim: int)`` operator with the shared inputs and counts.

    The reference is ``torch.<name>(x, dim)`` unless given, and so is the timing baseline;
    ``scaled_atol`` gives atol = 1e-4 x the reduced length, for results that accumulate that
    many terms; ``exact`` demands bit-equality, for results that are one of the inputs;
    ``rtol_per_case`` gives a dtype's rtol per case (see OperatorSpec.tolerances).
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
        reduce_dim=reduce_dim or (reduced_length if scaled_atol else None),
        tolerances=({d: Tolerance(rtol=0.0, atol=0.0) for d in FLOATS} if exact
                    else rtol_per_case),
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
            _along_dim_op(
            "amin", cases=REDUCTION_CASES, output_bytes=_reduced_output_bytes, exact=True,
            description="torch.amin(x, dim): the minimum of x over dim, keepdim=False (dim is "
                        "removed from the shape), in x's dtype; inputs are finite, and the "
                        "result must equal the minimal input exactly."),
        _along_dim_op(
            "argmin", cases=ARGMAX_CASES, output_bytes=_index_output_bytes,
            description="torch.argmin(x, dim): the int64 index along dim of the minimum of x, "
                        "keepdim=False (dim is removed from the shape); when several elements "
                        "tie for the minimum, the FIRST (smallest) index, as torch returns; "
                        "inputs are finite."),
        # Not scaled: a product's error is relative (about N fp32 roundings), which rtol covers
        # (grown with N in fp32, see _fp32_product_rtol); its values are mostly below 1e-4 x N
        # here, so a scaled atol would accept anything.
        _along_dim_op(
            "prod", cases=PRODUCT_CASES, output_bytes=_reduced_output_bytes, scaled_atol=False,
            reference=_product_float64_reference("prod"), baseline=_torch_along_dim("prod"),
            rtol_per_case={"float32": _fp32_product_rtol},
            description="torch.prod(x, dim): the product of x over dim, keepdim=False (dim is "
                        "removed from the shape); the output has x's dtype, and fp16/bf16 "
                        "should be multiplied in fp32."),
        _along_dim_op(
            "logsumexp", cases=LOGSUMEXP_CASES, output_bytes=_reduced_output_bytes,
            reduce_dim=_log_length,
            description="torch.logsumexp(x, dim): log(sum(exp(x))) over dim, keepdim=False, "
                        "computed stably as max + log(sum(exp(x - max))) in fp32 (inputs reach "
                        "magnitudes where exp(x) overflows fp32); the output has x's dtype."),
        _along_dim_op(
            "cumprod", cases=CUMPROD_CASES, tags=("scan",), output_bytes=_scan_output_bytes,
            reference=_product_float64_reference("cumprod"),
            baseline=_torch_along_dim("cumprod"), scaled_atol=False,
            rtol_per_case={"float32": _fp32_product_rtol},
            description="torch.cumprod(x, dim): the inclusive prefix product along dim, "
                        "out[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...]; same shape "
                        "and dtype as x, and fp16/bf16 should be multiplied in fp32."),
        _stat_op("var", "torch.var(x, dim, correction=correction, keepdim=keepdim): the sum of "
                        "squared deviations from the mean over dim, divided by "
                        "max(N - correction, 0) (correction=1 is the unbiased estimate, 0 the "
                        "biased one); keepdim=True keeps dim with size 1."),
        _stat_op("std", "torch.std(x, dim, correction=correction, keepdim=keepdim): the square "
                        "root of torch.var(x, dim, correction=correction, keepdim=keepdim), "
                        "i.e. sqrt(sum((x - mean)**2) / max(N - correction, 0)) over dim; "
                        "keepdim=True keeps dim with size 1."),
        aten_op(
            "norm",
            signature="kernel(x: Tensor, ord: float, dim: int) -> Tensor",
            description="torch.linalg.vector_norm(x, ord, dim), keepdim=False: for ord=2 "
                        "sqrt(sum(x**2)) over dim, for ord=1 sum(|x|) over dim (only 1 and 2 are "
                        "asked); the output has x's dtype, accumulated in fp32. dim may be "
                        "negative; x may be non-contiguous.",
            reference=_norm_reference,
            make_inputs=_norm_inputs,
            cases=NORM_CASES,
            flops=lambda p: 2 * numel(p["shape"]),
            bytes_moved=lambda p, size: numel(p["shape"]) * size + _reduced_output_bytes(p, size),
            tags=("reduction", "vector_norm"),
            reduce_dim=reduced_length,
        ),
            aten_op(
            "diff",
            signature="kernel(x: Tensor, dim: int = -1) -> Tensor",
            description="torch.diff(x, n=1, dim=dim) (no prepend/append): out[..., i, ...] = "
                        "x[..., i + 1, ...] - x[..., i, ...] along dim, whose size shrinks by "
                        "one; the output has x's dtype. dim defaults to -1 (some calls pass only "
                        "x) and may be negative; x may be non-contiguous.",
            reference=_diff_reference,
            make_inputs=_diff_inputs,
            cases=DIFF_CASES,
            flops=_diff_numel,
            bytes_moved=lambda p, size: (numel(p["shape"]) + _diff_numel(p)) * size,
            tags=("pointwise", "stencil"),
        ),
    ]
