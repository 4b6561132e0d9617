"""The fp32 rule for sums of products (GEMMs and their kin): an elementwise rounding bound.

An operator that sums K products per output (``mm``, ``bmm``, ``addmm``, ``linear``,
``baddbmm``, ``matmul``, the cuBLAS fp32 GEMMs) computed in fp32 arithmetic, in *any* order of
summation, blocked, split or fused, obeys the classical bound (Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., section 3.1, eq. 3.4-3.5)::

    |computed_ij - exact_ij| <= gamma_n * (|A| |B|)_ij,   gamma_n = n u / (1 - n u)

with u = 2^-24 (fp32's unit roundoff) and n = K + 2: K - 1 additions, one multiplication per
term, and the alpha and beta scalings and the bias added. ``(|A| |B|)_ij`` is the same
operator applied to the absolute values of every operand (alpha and beta included), which is
exactly the sum of the terms' magnitudes. The stored result adds one more rounding, u |exact|.
Complex products round each part: a complex product is within sqrt(2) gamma_2 of exact (Higham,
section 3.6), so the bound is sqrt(2) gamma_(K+4) (|A| |B|), with |.| the modulus. That holds for
complex64 tensors and for fp32 buffers that hold complex values as interleaved (re, im) pairs
(cuBLAS's complex routines, ``interleaved`` here): the magnitude of such a buffer is the pair's
modulus in its real slot and 0 in its imaginary one, and both slots of an output pair get the
pair's bound.

Against a float64 reference (its own error, about K 2^-53, is nothing beside this) the bound
admits every correct fp32 kernel and rejects one that computes from inputs rounded to TF32 or
fp16, whose error is about sqrt(K) 2^-11 times the terms' size, larger than the bound wherever
K is below about a thousand; the fixed ``atol = 1e-4 K`` let that through for ``linear``
(tests/test_product_bound.py measures both sides). Only fp32 and complex64 cases are held to
it; fp16 and bf16 results keep rtol/atol, their own rounding being the larger error there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from kgb_core.operators import Rounded

UNIT_ROUNDOFF = 2.0 ** -24
# Dtypes held to the bound, and what each is widened to for the exact reference.
WIDENED = {torch.float32: torch.float64, torch.complex64: torch.complex128}
BOUNDED_DTYPES = ("float32", "complex64")


def gamma(n: int, u: float = UNIT_ROUNDOFF) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of n roundings."""
    if n * u >= 1:
        return math.inf
    return n * u / (1 - n * u)


@dataclass(frozen=True)
class Bounded:
    """A reference output held to an elementwise bound: ``value`` in the output's dtype (what a
    candidate is compared with for shape and dtype), ``exact`` in float64 (or complex128), and
    ``bound``, the largest ``|actual - exact|`` a correct computation can show, per element."""

    value: torch.Tensor
    exact: torch.Tensor
    bound: torch.Tensor
    # How a failure names the rule, with where its derivation is.
    rule: str = ("the fp32 rounding bound of a sum of products, gamma_(K+2) (|A| |B|) "
                 "(kgb_core/evaluation/products.py)")


def _map(value: Any, leaf: Callable[[Any], Any]) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, leaf) for v in value)
    return leaf(value)


def _widen(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        wide = WIDENED.get(value.dtype)
        return value.to(wide).clone() if wide is not None else value.clone()
    return value


def _magnitude(value: Any, interleaved: bool = False) -> Any:
    """The absolute value of an operand, in the widened dtype (a complex one keeps its dtype,
    with the modulus as its real part, so the reference still takes it; an ``interleaved``
    buffer likewise, pair by pair)."""
    if isinstance(value, torch.Tensor):
        wide = _widen(value)
        if wide.is_complex():
            return wide.abs().to(wide.dtype)
        if interleaved and wide.is_floating_point() and wide.numel() % 2 == 0:
            pairs = wide.reshape(-1, 2)
            modulus = torch.linalg.vector_norm(pairs, dim=1)
            return torch.stack([modulus, torch.zeros_like(modulus)], dim=1).reshape(wide.shape)
        return wide.abs() if wide.is_floating_point() else wide
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, complex)):
        return abs(value)
    return value


def _tensors(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _bounded(exact: Any, magnitude: Any, like: Any, reduce_dim: int,
             interleaved: bool = False) -> Any:
    """``exact`` and ``magnitude`` (two runs of one reference) as a tree of ``Bounded``, with the
    dtypes of ``like`` (the fp32 run's outputs, or the arguments as handed over)."""
    if isinstance(exact, (list, tuple)):
        return type(exact)(_bounded(e, m, l, reduce_dim, interleaved)
                           for e, m, l in zip(exact, magnitude, like))
    if not isinstance(exact, torch.Tensor) or not isinstance(like, torch.Tensor) \
            or like.dtype not in WIDENED:
        return exact if not isinstance(like, torch.Tensor) else like
    if like.dtype.is_complex:
        scale = math.sqrt(2.0) * gamma(reduce_dim + 4)
        size = magnitude.real.abs()
    elif interleaved and exact.numel() % 2 == 0:
        scale = math.sqrt(2.0) * gamma(reduce_dim + 4)
        real_slots = magnitude.reshape(-1, 2)[:, :1].abs()
        size = real_slots.expand(-1, 2).reshape(exact.shape)
    else:
        scale = gamma(reduce_dim + 2)
        size = magnitude.abs()
    bound = scale * size + UNIT_ROUNDOFF * exact.abs()
    return Bounded(value=exact.to(like.dtype), exact=exact, bound=bound)


def bounded_reference(reference: Callable[..., Any], inputs: Sequence[Any],
                      reduce_dim: int, mutated_args: Sequence[int],
                      interleaved: bool = False) -> tuple[Any, list[Any]]:
    """The reference's output and its written arguments as ``Bounded`` trees: the reference run
    once on float64 copies of ``inputs`` (the exact values) and once on their magnitudes (the
    size of the terms); ``inputs`` themselves are not touched. ``interleaved``: fp32 buffers
    hold complex values as (re, im) pairs."""
    exact_inputs = [_map(value, _widen) for value in inputs]
    magnitude_inputs = [_map(value, lambda v: _magnitude(v, interleaved)) for value in inputs]
    exact = reference(*exact_inputs)
    magnitude = reference(*magnitude_inputs)
    if isinstance(exact, Rounded):
        exact, magnitude = exact.unrounded, magnitude.unrounded
    like = _map(exact, lambda t: t.to({v: k for k, v in WIDENED.items()}.get(t.dtype, t.dtype))
                if isinstance(t, torch.Tensor) else t)
    output = _bounded(exact, magnitude, like, reduce_dim, interleaved)
    arguments = list(inputs)
    for index in mutated_args:
        if index < len(inputs):
            arguments[index] = _bounded(exact_inputs[index], magnitude_inputs[index],
                                        inputs[index], reduce_dim, interleaved)
    return output, arguments
