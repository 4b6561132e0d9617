"""Prompts are filled from the operator and the chip, and never reveal held-out cases."""

from __future__ import annotations

from kgb_core.plugins import load_registry
from kgb_methods.prompts import render_prompt


def test_prompt_carries_signature_cases_and_chip_hints_but_no_heldout_case():
    registry = load_registry()
    spec = registry.operator("aten.layer_norm")
    quirks = registry.backend("cpu").quirks
    prompt = render_prompt(spec, "cpu", quirks)
    assert spec.signature in prompt and "aten.layer_norm" in prompt
    assert "F.layer_norm" in prompt, "a plain reference function is quoted"
    # Every dtype is checked on the CPU backend; what its interpreter cannot do is said.
    assert "Not checked on this chip" not in prompt
    assert all(gap in prompt for gap in quirks.unsupported_tl)
    assert all(hint in prompt for hint in quirks.prompt_hints)
    assert spec.shown_cases()[0].name in prompt
    assert not any(case.name in prompt for case in spec.cases if case.heldout)


def test_factory_made_references_are_described_not_quoted():
    registry = load_registry()
    prompt = render_prompt(registry.operator("aten.softmax"), "nvidia",
                           registry.backend("nvidia").quirks)
    assert "getattr(torch, name)" not in prompt
    assert "allow_tf32=False" in prompt
