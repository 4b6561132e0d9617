"""The adversarial corpus: every trick in tests/adversarial/ is caught, each by its own verdict.

The file format is kgb_core/adversarial.py's: ``# op:``, ``# expect:`` (what the run-time checks
alone give, the static screen turned off), ``# screen: rejected`` (the screen refuses it too).
Each cheat is run with the screen off, because the screen is a first filter and never the only
one; the screen's own verdict is checked on the text. None may pass, and none may change the
verdict of the next candidate: after each trick, the operator's known-good kernel must pass in
the same evaluator. A cheat marked ``# timed: yes`` is honest in every checked call and wrong
only once timed: it runs with timing on, and must be caught in its timed calls.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgb_core.adversarial import read_cheat, read_corpus
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.evaluation.screen import screen_source

CORPUS = read_corpus(Path(__file__).parent / "adversarial", backend="cpu",
                     sandboxed=find_sandbox().sandboxed)
# Cheats only a GPU can run (side streams, device-to-host copies, L2 persistence): here their
# screen verdicts are checked; benchmarks/anticheat_corpus.py runs them on the H200.
GPU_CORPUS = read_corpus(Path(__file__).parent / "adversarial" / "gpu", backend="nvidia")
# What a failure found in the timed calls says: "while timed, call 3 on ..." (a sampled output),
# "while being timed, ..." (the runner's checks), "while timing: ..." (an exception).
IN_TIMED_CALLS = re.compile(r"\bwhile (being timed|timed|timing)\b")


def test_the_corpus_is_large_and_covers_every_anti_cheat_verdict():
    assert len(CORPUS) >= 50
    expected = {cheat.expect for cheat in CORPUS}
    assert expected <= set(verdicts.ALL)
    assert {verdicts.REFERENCE_USED, verdicts.STALE_OUTPUT, verdicts.DEFERRED_WORK,
            verdicts.TAMPERING, verdicts.GHOST_REPLAY_MATCHED, verdicts.GHOST_REPLAY_DETECTED,
            verdicts.HELDOUT_FAILED, verdicts.OUTPUT_ALIASES_INPUT, verdicts.SCREEN_REJECTED,
            verdicts.HOST_READ, verdicts.WRONG_SHAPE_OR_DTYPE} <= expected
    assert len([cheat for cheat in CORPUS if cheat.timed]) >= 5


def test_a_timed_header_says_yes_or_is_absent(tmp_path):
    path = tmp_path / "cheat.py"
    for header, timed in (("", False), ("# timed: yes\n", True)):
        path.write_text(f"# op: aten.relu\n# expect: wrong_output\n{header}")
        assert read_cheat(path).timed is timed
    path.write_text("# op: aten.relu\n# expect: wrong_output\n# timed: true\n")
    with pytest.raises(ValueError, match="'# timed:' takes 'yes'"):  # not silently untimed
        read_cheat(path)


@pytest.mark.parametrize("cheat", CORPUS + GPU_CORPUS,
                         ids=[c.name for c in CORPUS] + [f"gpu/{c.name}" for c in GPU_CORPUS])
def test_the_screen_says_what_the_file_says(cheat):
    finding = screen_source(cheat.text)
    if cheat.screen_rejects:
        assert finding is not None and finding.verdict == verdicts.SCREEN_REJECTED
    else:
        assert finding is None, f"the screen refuses it ({finding.message}): say so"


@pytest.mark.parametrize("cheat", [c for c in CORPUS if not c.screen_only],
                         ids=[c.name for c in CORPUS if not c.screen_only])
def test_the_run_time_checks_catch_it(request, registry, cheat):
    # Looked up, not taken as arguments: a worker that runs no timed cheat starts no timed
    # evaluator.
    evaluator = request.getfixturevalue("unscreened_timed_cpu_evaluator" if cheat.timed
                                        else "unscreened_cpu_evaluator")
    result = evaluator.evaluate(cheat.op, cheat.text)
    assert result.verdict != verdicts.PASS
    assert result.verdict == cheat.expect, f"{result.verdict}: {result.message}"
    assert result.message
    assert result.sandbox == find_sandbox().name  # it ran: nothing of it may outlive it
    if cheat.timed:  # caught in its timed calls, not by a checked call before or after them
        assert IN_TIMED_CALLS.search(result.message), result.message
    honest = evaluator.evaluate(cheat.op, registry.operator(cheat.op).reference_kernel())
    assert honest.verdict == verdicts.PASS, f"after {cheat.name}: {honest.message}"
