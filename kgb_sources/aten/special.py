"""Special functions and integer bit math that need more than one expression: i0 (Cephes'
Chebyshev series), polygamma for n in {1, 2} (recurrence and asymptotic series), and
bitwise_not on integer and bool tensors."""

from __future__ import annotations

from typing import Any

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel
from kgb_sources.aten.pointwise import UNARY_CASES

I0_FLOPS_PER_ELEMENT = 60  # two Chebyshev sums of 18 and 7 terms, exp, sqrt, a division


def _shape(ctx: InputContext) -> tuple[tuple[int, ...], bool]:
    shape = tuple(ctx.params["shape"])
    transposed = bool(ctx.params.get("transposed"))
    return (shape[::-1] if transposed else shape), transposed


def _i0_inputs(ctx: InputContext) -> list[Any]:
    shape, transposed = _shape(ctx)
    # std 3: both series (|x| <= 8 and |x| > 8) are used, and fp16's i0 stays finite (< 11.5)
    # nearly everywhere; an infinite expected value is matched exactly.
    x = ctx.randn(*shape, scale=3.0)
    return [x.t() if transposed else x]


def _i0_reference(x):  # noqa: ANN001, ANN202
    import torch

    return torch.i0(x)


POLYGAMMA_CASES = (
    ShapeCase("trigamma_odd_2d", {"n": 1, "shape": (37, 129)}),
    ShapeCase("n2_prime_3d", {"n": 2, "shape": (3, 17, 61)}),
    ShapeCase("trigamma_transposed", {"n": 1, "shape": (33, 64), "transposed": True}),
    ShapeCase("n2_vector", {"n": 2, "shape": (1000,)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_n2_4d", {"n": 2, "shape": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden_trigamma", {"n": 1, "shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("vision_4d_n2", {"n": 2, "shape": (16, 128, 64, 60)}, tier=LARGE),
)


def _polygamma_inputs(ctx: InputContext) -> list[Any]:
    shape, transposed = _shape(ctx)
    # Positive x only: (0.05, 10) spans the recurrence (x < 8) and the asymptotic range, and
    # the values reach 400 (n = 1) and -16000 (n = 2) near 0.05.
    x = ctx.uniform(*shape, low=0.05, high=10.0)
    return [int(ctx.params["n"]), x.t() if transposed else x]


def _polygamma_reference(n, x):  # noqa: ANN001, ANN202
    import torch

    return torch.polygamma(n, x)


BITWISE_NOT_CASES = (
    ShapeCase("scalar", {"shape": ()}),
    ShapeCase("odd_2d", {"shape": (37, 129)}),
    ShapeCase("transposed", {"shape": (33, 64), "transposed": True}),
    ShapeCase("prime_3d", {"shape": (3, 17, 61)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
)


def _bitwise_not_inputs(ctx: InputContext) -> list[Any]:
    shape, transposed = _shape(ctx)
    torch = ctx.torch
    if ctx.dtype == torch.bool:
        x = ctx.randint(*shape, low=0, high=2).to(torch.bool).to(ctx.device)
    else:
        # int64 values beyond int32's range, so that a kernel computing in 32 bits shows.
        bound = 2**40 if ctx.dtype == torch.int64 else 2**31
        x = ctx.randint(*shape, low=-bound, high=bound, dtype=ctx.dtype)
    return [x.t() if transposed else x]


def _bitwise_not_reference(x):  # noqa: ANN001, ANN202
    import torch

    return torch.bitwise_not(x)


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "i0",
            signature="kernel(x: Tensor) -> Tensor",
            description="torch.i0: the modified Bessel function of the first kind of order 0, "
                        "I0(x) = sum_k (x/2)**(2k) / (k!)**2, elementwise; even in x and "
                        "growing like exp(|x|)/sqrt(2*pi*|x|). Output has x's shape and dtype; "
                        "x may be non-contiguous; compute in float32.",
            reference=_i0_reference,
            make_inputs=_i0_inputs,
            cases=UNARY_CASES,
            flops=lambda p: I0_FLOPS_PER_ELEMENT * numel(p["shape"]),
            bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
            tags=("pointwise", "elementwise", "special"),
        ),
        aten_op(
            "polygamma",
            signature="kernel(n: int, x: Tensor) -> Tensor",
            description="torch.polygamma(n, x): the n-th derivative of the digamma function, "
                        "elementwise, for n = 1 (trigamma, sum_k 1/(x+k)**2) or n = 2 "
                        "(-2 sum_k 1/(x+k)**3), on positive x (the cases draw x from "
                        "[0.05, 10)). Output has x's shape and dtype; x may be non-contiguous; "
                        "compute in float32.",
            reference=_polygamma_reference,
            make_inputs=_polygamma_inputs,
            cases=POLYGAMMA_CASES,
            # up to 8 recurrence steps (a division and 3 more each) and a 7-term series
            flops=lambda p: 50 * numel(p["shape"]),
            bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
            tags=("pointwise", "elementwise", "special"),
        ),
        aten_op(
            "bitwise_not",
            signature="kernel(x: Tensor) -> Tensor",
            description="torch.bitwise_not: ~x on an int32 or int64 tensor (two's complement, "
                        "-x - 1), logical not on a bool tensor. Output has x's shape and dtype; "
                        "x may be non-contiguous.",
            reference=_bitwise_not_reference,
            make_inputs=_bitwise_not_inputs,
            cases=BITWISE_NOT_CASES,
            flops=lambda p: numel(p["shape"]),
            bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
            dtypes=("int32", "int64", "bool"),
            tags=("pointwise", "elementwise", "bitwise"),
        ),
    ]
