"""Timed outputs are compared in a sample, and a candidate must not learn which: with many
timed calls, only a reservoir sample goes back to the judge (``runner.TimedCalls``)."""

from __future__ import annotations

from pathlib import Path

from kgb_core.adversarial import read_cheat
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator

CHEAT = Path(__file__).parent / "adversarial" / "timed_repairs_only_the_sampled_outputs.py"
# More calls than EVERY_CALL_UP_TO, so that only a sample of them is compared.
MANY = {"min_repetitions": 60, "max_repetitions": 60}


def test_a_candidate_that_repairs_only_the_sampled_outputs_is_caught(registry):
    """It wrote the answer, on its next call, into the outputs the harness still held. The
    sampled output is copied before that next call, so the copy holds what it returned."""
    cheat = read_cheat(CHEAT)
    settings = EvaluationSettings(seeds=(0,), timeout_s=600, timing=True, timing_settings=MANY,
                                  screen=False)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        result = evaluator.evaluate(cheat.op, cheat.text)
        assert result.verdict == verdicts.WRONG_OUTPUT, result.message
        assert "while timed" in result.message
        honest = evaluator.evaluate(cheat.op, registry.operator(cheat.op).reference_kernel())
    assert honest.passed, honest.message
    assert all(t["candidate"]["repetitions"] == 60 for t in honest.timings)
