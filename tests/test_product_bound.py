"""The fp32 bound for sums of products (kgb_core/evaluation/products.py): correct fp32 arithmetic
in any summation order passes on every fp32 case of every operator held to it, and the same
products computed from inputs rounded to TF32 or fp16 (what a tensor-core shortcut does) fail.

Torch on the CPU only; the alternative orders are computed here one fp32 operation at a time.
"""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation.compare import compare_outputs
from kgb_core.evaluation.products import bounded_reference, gamma
from kgb_core.operators import SMALL, InputContext
from kgb_core.plugins import load_registry

REGISTRY = load_registry()
BOUNDED = [spec for spec in REGISTRY.operators() if spec.product_bound]
FAMILY = {"aten.mm", "aten.bmm", "aten.addmm", "aten.linear", "aten.baddbmm", "aten.matmul",
          "aten.mv", "aten.addmv", "aten.dot", "aten.outer", "cublas.cublasSgemm_v2",
          "cublas.cublasSgemmStridedBatched", "cublas.cublasCgemm_v2"}


def _fp32_cases(spec):
    dtypes = [d for d in spec.dtypes if d in ("float32", "complex64")]
    return [(case, dtype) for case in spec.cases if case.tier == SMALL for dtype in dtypes]


PAIRS = [(spec, case, dtype) for spec in BOUNDED for case, dtype in _fp32_cases(spec)]
# Operators with an fp32 case (cuBLAS's D, Z and H routines are held to the bound in no dtype).
FP32 = [spec for spec in BOUNDED if _fp32_cases(spec)]


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    return value


def _inputs(spec, case, dtype, seed=0):
    return list(spec.make_inputs(InputContext(case, dtype, seed, "cpu")))


def _result(spec, inputs, actual):
    """What is compared: the returned value, then each argument written in place."""
    return [actual] + [inputs[i] for i in spec.mutated_args]


def _compare(spec, case, inputs, actual_inputs, actual):
    expected, arguments = bounded_reference(spec.reference, _clone(inputs),
                                            int(spec.reduce_dim(case.params)), spec.mutated_args,
                                            interleaved=spec.product_bound == "interleaved")
    tolerance = spec.tolerance("float32", case.params)  # unused where the bound applies
    comparison = compare_outputs(actual, expected, tolerance)
    for index in spec.mutated_args:
        comparison.absorb(compare_outputs(actual_inputs[index], arguments[index], tolerance,
                                          where=f"argument {index}"))
    return comparison


def _rounded(value, rounding):
    if isinstance(value, torch.Tensor) and value.dtype in (torch.float32, torch.complex64):
        if value.is_complex():
            return torch.complex(rounding(value.real), rounding(value.imag))
        return rounding(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_rounded(v, rounding) for v in value)
    return value


def _to_tf32(x):
    """Round to nearest at TF32's 10 mantissa bits, as tensor cores read fp32 inputs."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32).reshape(x.shape)


def _to_fp16(x):
    return x.to(torch.float16).to(torch.float32)


def test_the_family_is_held_to_the_bound():
    assert FAMILY <= {spec.id for spec in BOUNDED}


def test_gamma_is_highams():
    assert gamma(1) == pytest.approx(2.0 ** -24, rel=1e-6)
    assert gamma(10 ** 9) == float("inf")


@pytest.mark.parametrize("spec,case,dtype", PAIRS,
                         ids=[f"{s.id}-{c.name}-{d}" for s, c, d in PAIRS])
def test_torch_fp32_passes(spec, case, dtype):
    """torch's own fp32 computation (blocked, vectorised: one order among many) passes."""
    inputs = _inputs(spec, case, dtype)
    actual_inputs = _clone(inputs)
    actual = spec.reference(*actual_inputs)
    comparison = _compare(spec, case, inputs, actual_inputs, actual)
    assert comparison.ok, comparison.message


@pytest.mark.parametrize("spec", FP32, ids=[s.id for s in FP32])
@pytest.mark.parametrize("rounding", [_to_tf32, _to_fp16], ids=["tf32", "fp16"])
def test_products_of_rounded_inputs_fail(spec, rounding):
    """The exact products of inputs rounded to TF32 or fp16, stored as fp32: wrong on some
    shown case for every operator. (The bound is the worst case of any summation order, K u
    times the terms' size, while such rounding errs by about sqrt(K) 2^-11 times it: past K of
    about a thousand the bound admits it, so each operator's small cases keep a K below.)"""
    failed = []
    for case, dtype in _fp32_cases(spec):
        inputs = _inputs(spec, case, dtype)
        # Exact products of the rounded inputs (float64), stored as fp32: the shortcut's best.
        wide = [_retyped(_rounded(v, rounding), _WIDE) for v in _clone(inputs)]
        actual = _retyped(spec.reference(*wide), _NARROW)
        comparison = _compare(spec, case, inputs, [_retyped(v, _NARROW) for v in wide], actual)
        if not comparison.ok:
            failed.append(case.name)
    assert failed, f"{spec.id}: products of {rounding.__name__} inputs passed every case"


_WIDE = {torch.float32: torch.float64, torch.complex64: torch.complex128}
_NARROW = {wide: narrow for narrow, wide in _WIDE.items()}


def _retyped(value, dtypes):
    if isinstance(value, torch.Tensor):
        return value.to(dtypes.get(value.dtype, value.dtype))
    if isinstance(value, (list, tuple)):
        return type(value)(_retyped(v, dtypes) for v in value)
    return value


def _sequential_mm(a, b, *, reverse=False, split=1):
    """a @ b in fp32, one multiply-add per step in k order (or reversed), or as ``split``
    partial sums added at the end (split-K)."""
    k = a.shape[-1]
    order = list(range(k))[::-1] if reverse else list(range(k))
    parts = [order[i::split] for i in range(split)]
    total = None
    for part in parts:
        acc = torch.zeros(*a.shape[:-1], b.shape[-1], dtype=torch.float32)
        for index in part:
            acc = acc + a[..., index:index + 1] * b[..., index:index + 1, :]
        total = acc if total is None else total + acc
    return total


@pytest.mark.parametrize("op", ["aten.mm", "aten.bmm"])
@pytest.mark.parametrize("order", [{}, {"reverse": True}, {"split": 4}, {"split": 7}],
                         ids=["sequential", "reversed", "split4", "split7"])
def test_any_summation_order_passes(op, order):
    spec = REGISTRY.operator(op)
    for case, dtype in _fp32_cases(spec):
        inputs = _inputs(spec, case, dtype)
        actual = _sequential_mm(*inputs, **order)
        comparison = _compare(spec, case, inputs, _clone(inputs), actual)
        assert comparison.ok, f"{case.name}: {comparison.message}"
