"""The adversarial corpus: every trick in tests/adversarial/ is caught, each by its own verdict.

Each file names the operator it pretends to implement and the verdict it must get in its
first lines (``# op:``, ``# expect:``); a file whose verdict differs without the OS sandbox
says so (``# unsandboxed:``). None may pass, and none may change the verdict of the next
candidate: after each trick, the operator's known-good kernel must pass in the same evaluator.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.sandbox import find_sandbox

CORPUS = Path(__file__).parent / "adversarial"


def _header(path: Path) -> tuple[str, str]:
    text = path.read_text()
    op = re.search(r"^# op: (\S+)$", text, re.MULTILINE)
    expect = re.search(r"^# expect: (\S+)$", text, re.MULTILINE)
    assert op and expect, f"{path.name} lacks its '# op:' or '# expect:' line"
    unsandboxed = re.search(r"^# unsandboxed: (\S+)$", text, re.MULTILINE)
    if not find_sandbox().sandboxed and unsandboxed:
        return op.group(1), unsandboxed.group(1)
    return op.group(1), expect.group(1)


FILES = sorted(CORPUS.glob("*.py"))


def test_the_corpus_is_large_and_covers_every_anti_cheat_verdict():
    assert len(FILES) >= 15
    expected = {_header(path)[1] for path in FILES}
    assert expected <= set(verdicts.ALL)
    assert {verdicts.REFERENCE_USED, verdicts.STALE_OUTPUT, verdicts.DEFERRED_WORK,
            verdicts.TAMPERING, verdicts.GHOST_REPLAY_MATCHED, verdicts.HELDOUT_FAILED,
            verdicts.OUTPUT_ALIASES_INPUT, verdicts.SCREEN_REJECTED} <= expected



@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_adversarial_candidate_is_caught(cpu_evaluator, registry, path):
    op, expected = _header(path)
    result = cpu_evaluator.evaluate(op, path.read_text())
    assert result.verdict != verdicts.PASS
    assert result.verdict == expected, f"{result.verdict}: {result.message}"
    if result.verdict != verdicts.SCREEN_REJECTED:  # it ran: nothing of it may outlive it
        assert result.sandbox == find_sandbox().name
        honest = cpu_evaluator.evaluate(op, registry.operator(op).reference_kernel())
        assert honest.verdict == verdicts.PASS, f"after {path.name}: {honest.message}"
    assert result.message
