"""Honest kernels in the style of published ones (tests/controls/): every check must let them
pass, timed too. A check that rejects one of them is a bug in the check.

Each is written for this suite in the manner of a published source (Triton's tutorials,
FlagGems, Liger-Kernel, vLLM's Triton ops): autotuning aside (issue 22), they use what those do,
a grid callable of the launch's META, @triton.heuristics, a constexpr global, a permuted view
as the output, an out-parameter, and one scalar read back on the host to pick a kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.evaluation.screen import screen_source
from kgb_core.plugins import load_registry

CONTROLS = sorted((Path(__file__).parent / "controls").glob("*.py"))


@pytest.fixture(scope="module")
def timing_evaluator():
    settings = EvaluationSettings(seeds=(0,), timeout_s=300, timing=True)
    with Evaluator.for_backend(load_registry().backend("cpu"), settings) as evaluator:
        yield evaluator


def test_there_are_controls_for_each_style():
    assert len(CONTROLS) >= 4


@pytest.mark.parametrize("path", CONTROLS, ids=[p.stem for p in CONTROLS])
def test_control_passes_every_check_timed_too(timing_evaluator, path):
    text = path.read_text()
    op = re.search(r"^# op: (\S+)$", text, re.MULTILINE).group(1)
    assert screen_source(text) is None
    result = timing_evaluator.evaluate(op, text)
    assert result.verdict == verdicts.PASS, f"{path.name}: {result.verdict}: {result.message}"
    assert result.timings, "a timed evaluation that timed nothing"
