"""The adversarial corpus: every trick in tests/adversarial/ is caught, each by its own verdict.

The file format is kgb_core/adversarial.py's: ``# op:``, ``# expect:`` (what the run-time checks
alone give, the static screen turned off), ``# screen: rejected`` (the screen refuses it too).
Each cheat is run with the screen off, because the screen is a first filter and never the only
one; the screen's own verdict is checked on the text. None may pass, and none may change the
verdict of the next candidate: after each trick, the operator's known-good kernel must pass in
the same evaluator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgb_core.adversarial import read_corpus
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.evaluation.screen import screen_source

CORPUS = read_corpus(Path(__file__).parent / "adversarial",
                     sandboxed=find_sandbox().sandboxed)


def test_the_corpus_is_large_and_covers_every_anti_cheat_verdict():
    assert len(CORPUS) >= 50
    expected = {cheat.expect for cheat in CORPUS}
    assert expected <= set(verdicts.ALL)
    assert {verdicts.REFERENCE_USED, verdicts.STALE_OUTPUT, verdicts.DEFERRED_WORK,
            verdicts.TAMPERING, verdicts.GHOST_REPLAY_MATCHED, verdicts.GHOST_REPLAY_DETECTED,
            verdicts.HELDOUT_FAILED, verdicts.OUTPUT_ALIASES_INPUT, verdicts.SCREEN_REJECTED,
            verdicts.HOST_READ, verdicts.WRONG_SHAPE_OR_DTYPE} <= expected


@pytest.mark.parametrize("cheat", CORPUS, ids=[c.name for c in CORPUS])
def test_the_screen_says_what_the_file_says(cheat):
    finding = screen_source(cheat.text)
    if cheat.screen_rejects:
        assert finding is not None and finding.verdict == verdicts.SCREEN_REJECTED
    else:
        assert finding is None, f"the screen refuses it ({finding.message}): say so"


@pytest.mark.parametrize("cheat", [c for c in CORPUS if not c.screen_only],
                         ids=[c.name for c in CORPUS if not c.screen_only])
def test_the_run_time_checks_catch_it(unscreened_cpu_evaluator, registry, cheat):
    result = unscreened_cpu_evaluator.evaluate(cheat.op, cheat.text)
    assert result.verdict != verdicts.PASS
    assert result.verdict == cheat.expect, f"{result.verdict}: {result.message}"
    assert result.message
    assert result.sandbox == find_sandbox().name  # it ran: nothing of it may outlive it
    honest = unscreened_cpu_evaluator.evaluate(cheat.op,
                                               registry.operator(cheat.op).reference_kernel())
    assert honest.verdict == verdicts.PASS, f"after {cheat.name}: {honest.message}"
