"""Cheats that still pass, kept as strict expected failures until the issue named in each file
closes them (tests/adversarial/open/). Once one is caught, its test passes, which fails the
suite: move the file into tests/adversarial/ with the verdict it now gets. They run with the
static screen off, as the corpus does: what is open is what running cannot yet catch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator

OPEN = sorted((Path(__file__).parent / "adversarial" / "open").glob("*.py"))


@pytest.mark.parametrize("path", OPEN, ids=[p.stem for p in OPEN])
@pytest.mark.xfail(strict=True, reason="a known open cheat (see the issue in the file)")
def test_open_cheat_is_caught(registry, path):
    text = path.read_text()
    op = re.search(r"^# op: (\S+)$", text, re.MULTILINE).group(1)
    assert re.search(r"^# issue: \d+", text, re.MULTILINE), f"{path.name} names no issue"
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True, screen=False)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        result = evaluator.evaluate(op, text)
    assert result.verdict != verdicts.PASS, f"{path.name} passed: {result.message}"
