"""kgb as a function (kgb_core.service): the verdicts ``kgb eval`` gives, from Python, over
judges kept open between calls; importing kgb_core stays light."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kgb_core.errors import UserError
from kgb_core.plugins import load_registry
from kgb_core.service import EvalRequest, EvaluationService, as_request

ROOT = Path(__file__).resolve().parents[1]
# A right candidate that is quick to check and time in the interpreter: the reference kernel.
RIGHT = load_registry().operator("aten.neg").reference_kernel()
CHEAT = (ROOT / "tests" / "adversarial" / "staged_answer_copied_by_triton.py").read_text()


def test_importing_kgb_core_imports_no_torch_until_evaluate_is_used():
    code = ("import sys, kgb_core; assert 'torch' not in sys.modules; "
            "assert callable(kgb_core.evaluate) and callable(kgb_core.evaluate_many); "
            "print('light')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "light" in done.stdout, done.stderr


@pytest.fixture(scope="module")
def service():
    with EvaluationService("cpu") as started:
        yield started


def test_evaluate_gives_kgb_evals_verdicts(service):
    right = service.evaluate(RIGHT, "aten.neg", timing=False)
    assert right.verdict == "pass" and right.method == "api" and right.cases
    cheat = service.evaluate(CHEAT, "aten.t", timing=False, seed=11)
    assert cheat.verdict == "reference_used", cheat.message
    assert {case.get("seed") for case in cheat.cases} <= {11, None}


def test_evaluate_many_answers_in_order_over_the_same_workers(service):
    results = service.evaluate_many([as_request(("aten.t", CHEAT)),
                                     as_request({"op": "aten.neg", "source": RIGHT,
                                                 "timing": False}),
                                     EvalRequest("aten.t", CHEAT, timing=False)])
    assert [r.verdict for r in results] == ["reference_used", "pass", "reference_used"]


@pytest.mark.parametrize("bad, says", [
    (lambda s: s.submit(EvalRequest("aten.no_such_op", "x")), "unknown operator"),
    (lambda s: EvalRequest("aten.softmax", None), "source as a string"),
    (lambda s: EvalRequest("aten.softmax", "x", seed=-2), "seed"),
    (lambda s: as_request({"op": "aten.softmax", "source": "x", "temperature": 1}), "unknown"),
    (lambda s: as_request(["aten.softmax"]), "an (op, source) pair"),
])
def test_a_bad_request_is_a_clear_error_before_any_work(service, bad, says):
    with pytest.raises(UserError, match=re.escape(says)):
        bad(service)


def test_a_timed_candidate_has_its_device_to_itself_while_checks_run_beside_each_other(
        service, monkeypatch):
    """The service's check workers and its timing worker share each device's gate: no check
    runs while a timed candidate does (its timings are the device's alone)."""
    import threading
    import time

    from kgb_core.evaluation.evaluator import Evaluator

    spans: list[tuple[bool, float, float]] = []
    lock = threading.Lock()
    evaluate = Evaluator.evaluate

    def recorded(self, *args, **kwargs):
        started = time.monotonic()
        try:
            return evaluate(self, *args, **kwargs)
        finally:
            with lock:
                spans.append((self.settings.timing, started, time.monotonic()))

    monkeypatch.setattr(Evaluator, "evaluate", recorded)
    requests = [EvalRequest("aten.neg", RIGHT, timing=False) for _ in range(3)]
    requests.insert(1, EvalRequest("aten.neg", RIGHT, timing=True))
    requests.append(EvalRequest("aten.neg", RIGHT, timing=False))
    assert {r.verdict for r in service.evaluate_many(requests)} == {"pass"}
    timed = [(start, end) for timing, start, end in spans if timing]
    checks = [(start, end) for timing, start, end in spans if not timing]
    assert len(timed) == 1 and len(checks) == 4
    for start, end in timed:
        assert all(check_end <= start or check_start >= end for check_start, check_end in checks)


def test_devices_are_given_as_kgb_run_takes_them():
    with pytest.raises(UserError, match="there is no device 999"):
        EvaluationService("cpu", devices="999")
    with EvaluationService("cpu", devices="0") as pinned:
        assert pinned.devices == [0] and pinned.slots(timing=False) == 2
