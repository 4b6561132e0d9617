"""Attention's rules (kgb_core/evaluation/attention_bound.py). fp32: correct attention in
different orders (torch's, and a blocked online softmax with exp2 as flash-attention kernels
compute it) passes every shown fp32 case, and the same computed from q, k and v rounded to fp16
or TF32 fails, as it did not under the flat atol. fp16/bf16: flash attention's rounding of P to
the dtype passes where the published rtol/atol failed it, and rounding to fp8 fails. Torch on
the CPU only."""

from __future__ import annotations

import math

import pytest
import torch

from kgb_core.evaluation import checker
from kgb_core.evaluation.attention_bound import attention_bound
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import SMALL, InputContext
from kgb_core.plugins import load_registry

SPEC = load_registry().operator("aten.scaled_dot_product_attention")
CASES = [case for case in SPEC.cases if case.tier == SMALL]


def _inputs(case, seed=0):
    return list(SPEC.make_inputs(InputContext(case, "float32", seed, "cpu")))


def _online_softmax(q, k, v, is_causal, scale, block=16, rounded_to=None, sum_rounded=False):
    """Flash attention's order, in fp32: key blocks of ``block``, a running max and sum, the
    accumulator rescaled by exp2 of the max's change, log2(e) folded into the scale. With
    ``rounded_to`` (fp16/bf16 inputs, as Triton's tutorial computes them), P is rounded to that
    dtype before P V, the sum taken of the unrounded P (of the rounded one with
    ``sum_rounded``), and the output rounded once to the inputs' dtype."""
    dtype = q.dtype
    q, k, v = q.float(), k.float(), v.float()
    s = (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])) * math.log2(math.e)
    lq, lk = q.shape[-2], k.shape[-2]
    top = torch.full((*q.shape[:-1], 1), -math.inf)
    total = torch.zeros((*q.shape[:-1], 1))
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]))
    rows = torch.arange(lq).unsqueeze(-1)
    for start in range(0, lk, block):
        keys = torch.arange(start, min(start + block, lk))
        scores = torch.matmul(q, k[..., keys, :].transpose(-2, -1)) * s
        if is_causal:
            scores = scores.masked_fill(keys.unsqueeze(0) > rows, -math.inf)
        new_top = torch.maximum(top, scores.amax(dim=-1, keepdim=True))
        alpha = torch.exp2(top - new_top)
        p = torch.exp2(scores - new_top)
        rounded = p if rounded_to is None else p.to(rounded_to).float()
        total = total * alpha + (rounded if sum_rounded else p).sum(dim=-1, keepdim=True)
        acc = acc * alpha + torch.matmul(rounded, v[..., keys, :])
        top = new_top
    return (acc / total).to(dtype)


def _torch_fp32(q, k, v, is_causal, scale):
    return SPEC.reference(q, k, v, is_causal, scale)


def _to_fp16(x):
    return x.to(torch.float16).to(torch.float32)


def _to_tf32(x):
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32).reshape(x.shape)


def _check(case, compute, rounding=None):
    inputs = _inputs(case)
    q, k, v, is_causal, scale = inputs
    if rounding is not None:
        q, k, v = rounding(q), rounding(k), rounding(v)
    actual = compute(q, k, v, is_causal, scale)
    tolerance = SPEC.tolerance("float32", case.params)
    return (compare_outputs(actual, attention_bound(inputs, tolerance), tolerance),
            compare_outputs(actual, SPEC.reference(*inputs), tolerance))


@pytest.mark.parametrize("compute", [_torch_fp32, _online_softmax], ids=["torch", "online"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_correct_fp32_attention_passes(case, compute):
    bounded, _ = _check(case, compute)
    assert bounded.ok, bounded.message


@pytest.mark.parametrize("rounding", [_to_fp16, _to_tf32], ids=["fp16", "tf32"])
def test_attention_of_rounded_inputs_fails_where_the_flat_atol_passed_it(rounding):
    outcomes = [_check(case, _online_softmax, rounding) for case in CASES]
    assert all(not bounded.ok for bounded, _ in outcomes), \
        [case.name for case, (bounded, _) in zip(CASES, outcomes) if bounded.ok]
    assert any(flat.ok for _, flat in outcomes)  # what the bound is for


def test_each_dtype_says_its_rule():
    # The spec's rule is attention_bound, imported when a case is judged (listing operators
    # must not import torch): it names that function and gives its bound, to the bit.
    rule = SPEC.rounding_bound
    assert (rule.__module__, rule.__name__) == (attention_bound.__module__,
                                                attention_bound.__name__)
    inputs = _inputs(CASES[0])
    tolerance = SPEC.tolerance("float32", CASES[0].params)
    ours, theirs = rule(inputs, tolerance), attention_bound(inputs, tolerance)
    assert torch.equal(ours.exact, theirs.exact) and torch.equal(ours.bound, theirs.bound)
    tolerances = SPEC.describe()["tolerances"]
    assert "bound" in tolerances["float32"]
    for dtype in ("float16", "bfloat16"):
        assert "bound" not in tolerances[dtype] and "widened" in tolerances[dtype]
        assert tolerances[dtype]["rtol"] > 0


# The probe draw (a seed of the judge's) where flash attention's bf16 rounding of P failed the
# published rule on one element.
FAILED_PUBLISHED = ("causal_head_dim_24", "bfloat16", checker.REWRITE_SEEDS[1])


def _low_precision_check(case, dtype, seed, rounded_to, sum_rounded=False):
    inputs = list(SPEC.make_inputs(InputContext(case, dtype, seed, "cpu")))
    actual = _online_softmax(*inputs, block=32, rounded_to=rounded_to, sum_rounded=sum_rounded)
    tolerance = SPEC.tolerance(dtype, case.params)
    return (compare_outputs(actual, attention_bound(inputs, tolerance), tolerance),
            compare_outputs(actual, SPEC.reference(*inputs), tolerance))


def test_flash_attentions_rounding_of_p_failed_the_published_rule_and_passes_this_one():
    name, dtype, seed = FAILED_PUBLISHED
    case = next(c for c in CASES if c.name == name)
    widened, published = _low_precision_check(case, dtype, seed, torch.bfloat16)
    assert not published.ok  # what the widening is for
    assert widened.ok, widened.message


@pytest.mark.parametrize("sum_rounded", [False, True], ids=["sum_of_p", "sum_of_rounded_p"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_p_rounded_to_the_inputs_dtype_passes(case, dtype, sum_rounded):
    for seed in (0, 1, 2, *checker.REWRITE_SEEDS):
        widened, _ = _low_precision_check(case, dtype, seed, getattr(torch, dtype), sum_rounded)
        assert widened.ok, (seed, widened.message)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_p_rounded_to_fp8_fails(dtype):
    outcomes = [_low_precision_check(case, dtype, 0, torch.float8_e4m3fn)[0] for case in CASES]
    assert not any(outcome.ok for outcome in outcomes), \
        [case.name for case, outcome in zip(CASES, outcomes) if outcome.ok]


def test_torchs_own_low_precision_answer_passes():
    """The widened rule holds the reference to itself: nothing within the published rule of
    torch's answer fails for the reference's own rounding."""
    for case in CASES:
        for dtype in ("float16", "bfloat16"):
            inputs = list(SPEC.make_inputs(InputContext(case, dtype, 0, "cpu")))
            tolerance = SPEC.tolerance(dtype, case.params)
            outcome = compare_outputs(SPEC.reference(*inputs), attention_bound(inputs, tolerance),
                                      tolerance)
            assert outcome.ok, (case.name, dtype, outcome.message)


def test_the_bound_is_chunked_without_changing_it(monkeypatch):
    import kgb_core.evaluation.attention_bound as module

    inputs = _inputs(CASES[0])
    tolerance = SPEC.tolerance("float32", CASES[0].params)
    whole = attention_bound(inputs, tolerance)
    monkeypatch.setattr(module, "CHUNK_SCORES", 1)
    chunked = attention_bound(inputs, tolerance)
    assert torch.equal(whole.exact, chunked.exact) and torch.equal(whole.bound, chunked.bound)


def test_the_reference_kernel_passes_on_the_probe_draw_that_failed_it():
    """The whole evaluation, the judge's probes forced onto the draw where CI saw the
    reference kernel fail (benchmarks/probe_draw_audit.py tries every draw of every operator)."""
    from kgb_core.evaluation.checker import probe_pool, runnable_cases
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator

    registry = load_registry()
    backend = registry.backend("cpu")
    name, dtype, _ = FAILED_PUBLISHED
    pool = probe_pool(SPEC, runnable_cases(SPEC, backend.quirks))
    draw = [(case.name, d) for case, d in pool].index((name, dtype))
    settings = EvaluationSettings(seeds=(0,), timing=False, probe_draw=draw)
    with Evaluator.for_backend(backend, settings) as evaluator:
        result = evaluator.evaluate(SPEC.id, SPEC.reference_kernel())
    assert result.probes == {"rewritten inputs": f"{name}/{dtype}",
                             "ghost replay": f"{name}/{dtype}"}
    assert result.verdict == "pass", result.message
