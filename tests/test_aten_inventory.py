"""The ATen source as a whole: its size, the mc110 cross-chip set, and what every operator
carries (category, shape cases of both tiers, a held-out case, counts, a reference kernel)."""

from __future__ import annotations

import json

import pytest

from conftest import kgb
from kgb_core.operators import LARGE, SMALL, InputContext
from kgb_core.plugins import load_registry
from kgb_sources.aten.inventory import MC110, MC110_ADDITIONS, NOT_IN_MC110, PUBLISHED_ATEN

CATEGORIES = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
              "creation", "loss", "attention", "scan", "sort"}
SPECS = load_registry().operators(["aten"])


def test_the_source_has_at_least_110_operators_and_exactly_110_are_tagged_mc110():
    listed = json.loads(kgb("ops", "--source", "aten", "--json").stdout)
    assert len(listed) >= 110
    tagged = json.loads(kgb("ops", "--tag", "mc110", "--json").stdout)
    assert len(tagged) == 110
    assert {op["name"] for op in tagged} == set(MC110)


def test_mc110_keeps_every_published_operator_it_does_not_explain_away():
    names = {spec.name for spec in SPECS}
    kept = [name for name in PUBLISHED_ATEN if name not in NOT_IN_MC110]
    assert len(kept) + len(MC110_ADDITIONS) == 110
    assert not [name for name in kept if name not in names]
    # An operator left out is not quietly present under its published name either.
    assert not (set(NOT_IN_MC110) & names)
    assert all(reason.strip() for reason in NOT_IN_MC110.values())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_every_operator_carries_what_a_prompt_and_a_report_need(spec):
    assert len(spec.tags & CATEGORIES) == 1, f"category tags: {sorted(spec.tags & CATEGORIES)}"
    tiers = {case.tier for case in spec.cases}
    assert {SMALL, LARGE} <= tiers
    assert any(case.heldout for case in spec.cases)
    assert len(spec.shown_cases()) >= 3
    assert spec.signature.startswith("kernel(") and len(spec.description) > 20
    assert "float64" not in spec.dtypes, "no case may need fp64: not every chip has it"
    assert spec.reference_kernel is not None and "def kernel" in spec.reference_kernel()
    for case in spec.cases:
        for dtype in spec.dtypes:
            assert spec.flops(case.params) >= 0
            assert spec.bytes_moved(case.params, 4) > 0
    # Inputs build on the CPU for the smallest shown case, from the seed alone.
    case = next(c for c in spec.cases if c.tier == SMALL and not c.heldout)
    first = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
    again = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
    assert repr(first) == repr(again)
