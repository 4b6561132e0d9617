"""Attention's fp32 bound (kgb_core/evaluation/attention_bound.py): correct fp32 attention in
different orders (torch's, and a blocked online softmax with exp2 as flash-attention kernels
compute it) passes every shown fp32 case, and the same computed from q, k and v rounded to fp16
or TF32 fails, as it did not under the flat atol. Torch on the CPU only."""

from __future__ import annotations

import math

import pytest
import torch

from kgb_core.evaluation.attention_bound import attention_bound
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import SMALL, InputContext
from kgb_core.plugins import load_registry

SPEC = load_registry().operator("aten.scaled_dot_product_attention")
CASES = [case for case in SPEC.cases if case.tier == SMALL]


def _inputs(case, seed=0):
    return list(SPEC.make_inputs(InputContext(case, "float32", seed, "cpu")))


def _online_softmax(q, k, v, is_causal, scale, block=16):
    """Flash attention's order in fp32: key blocks of ``block``, a running max and sum, the
    accumulator rescaled by exp2 of the max's change, log2(e) folded into the scale."""
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
        total = total * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + torch.matmul(p, v[..., keys, :])
        top = new_top
    return acc / total


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
    return (compare_outputs(actual, attention_bound(inputs), tolerance),
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


def test_the_bound_is_judged_only_for_fp32_and_said_so():
    assert SPEC.rounding_bound is attention_bound
    assert "bound" in SPEC.describe()["tolerances"]["float32"]
    assert "bound" not in SPEC.describe()["tolerances"]["float16"]


def test_the_bound_is_chunked_without_changing_it(monkeypatch):
    import kgb_core.evaluation.attention_bound as module

    inputs = _inputs(CASES[0])
    whole = attention_bound(inputs)
    monkeypatch.setattr(module, "CHUNK_SCORES", 1)
    chunked = attention_bound(inputs)
    assert torch.equal(whole.exact, chunked.exact) and torch.equal(whole.bound, chunked.bound)
