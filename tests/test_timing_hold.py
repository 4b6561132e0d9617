"""Only the timed calls hold the device alone (issue 25).

While one judge holds its device's lock exclusive, every other judge's check waits: on the
H100 the hold was 6.7 s an operator, of which drawing the timed input sets and handing them to
the runner took 1.5 s, and it bounded a sweep at about 9 operators a minute whatever the
workers. Here a real judge (CPU backend, real sandboxed runners, a real lock file) times
aten.neg's reference while every runner request and every input draw records whether the
device was held alone at that moment.
"""

from __future__ import annotations

import pytest
from conftest import CPU_BACKEND_PRELUDE, script_report

HOLD_SCRIPT = r"""
import dataclasses, json, os, sys
""" + CPU_BACKEND_PRELUDE + r"""
from kgb_core.evaluation import checker
from kgb_core.evaluation.device_lock import DeviceLock
from kgb_core.evaluation.runners import RunnerChannel


class CountingLock(DeviceLock):
    takes = 0

    def exclusive(self):
        if not self._exclusive_depth:
            CountingLock.takes += 1
        return super().exclusive()


lock = CountingLock(os.path.join(sys.argv[1], "cpu-0.lock"))
judge = Judge(backend, registry, device_lock=lock)
log = []
request = RunnerChannel.request


def logged(channel, payload, deadline):
    log.append((payload.get("op"), lock._exclusive_depth,
                payload.get("of") or payload.get("keep")))
    return request(channel, payload, deadline)


RunnerChannel.request = logged
neg = registry.operator("aten.neg")


def drawn(ctx):
    log.append(("draw", lock._exclusive_depth, None))
    return neg.make_inputs(ctx)


reports = {}
for batch_bytes in (2 << 30, 1):  # every case in one batch; then each case a batch of its own
    checker.TIMED_BATCH_BYTES = batch_bytes
    log.clear()
    CountingLock.takes = 0
    result = judge.evaluate_spec(dataclasses.replace(neg, make_inputs=drawn),
                                 neg.reference_kernel(), seeds=[0], timing=True)
    reports[batch_bytes] = {"verdict": result.verdict, "message": result.message,
                            "log": list(log), "takes": CountingLock.takes,
                            "timed": len(result.timings), "alone": result.device_alone_s,
                            "stages": result.stage_s, "shared_steps": result.shared_steps,
                            "hold_parts": [sorted(t["hold_s"]) for t in result.timings],
                            "samples_parts": [sorted(t.get("samples_s") or ())
                                              for t in result.timings]}
judge.close()
print(json.dumps(reports))
"""


@pytest.fixture(scope="module")
def timed_neg(tmp_path_factory) -> dict:
    """aten.neg's reference timed by one real judge twice: all its cases in one batch, then
    each case in a batch of its own (``checker.TIMED_BATCH_BYTES`` of 1 byte)."""
    return script_report(HOLD_SCRIPT, str(tmp_path_factory.mktemp("lock")), timeout=300)


def test_draws_and_hand_overs_happen_beside_other_checks_only_timings_hold_the_device(timed_neg):
    report = timed_neg[str(2 << 30)]
    assert report["verdict"] == "pass", report["message"]
    held = {(what, depth) for what, depth, _ in report["log"]}
    assert ("time", 1) in held and ("time", 0) not in held, held
    assert ("put", 0) in held and ("put", 1) not in held, held
    assert ("samples", 0) in held and ("samples", 1) not in held, held
    assert ("draw", 1) not in held, "an input was drawn while the device was held alone"
    assert report["takes"] == 1, "every timed case of one operator under one hold"
    assert report["alone"] > 0 and set(report["stages"]) >= {"trials", "timing"}, report


def test_cases_past_the_batch_budget_take_a_hold_each(timed_neg):
    report = timed_neg["1"]
    assert report["verdict"] == "pass", report["message"]
    assert report["timed"] >= 2 and report["takes"] == report["timed"], report


def test_each_timed_cases_samples_are_asked_for_by_its_own_name_after_the_hold(timed_neg):
    """The batch's time requests, then (the hold over) one samples request each, for the very
    slots timed; the hold's record no longer counts the samples, which get one of their own."""
    report = timed_neg[str(2 << 30)]
    assert report["verdict"] == "pass", report["message"]
    timed = [slot for what, _, slot in report["log"] if what == "time"]
    asked = [slot for what, _, slot in report["log"] if what == "samples"]
    assert len(timed) >= 2 and sorted(asked) == sorted(timed) == sorted(set(timed)), report
    ops = [what for what, _, _ in report["log"] if what in ("time", "samples")]
    assert ops == ["time"] * len(timed) + ["samples"] * len(asked), ops
    assert all(parts == ["baseline", "candidate", "runner"] for parts in report["hold_parts"])
    assert all(parts == ["request", "runner", "unpack"] for parts in report["samples_parts"])


def test_each_stages_shared_steps_are_counted_and_a_step_inside_a_step_is_one(timed_neg):
    """What a judge about to time waits for: the steps under way. Each stage's are counted
    (a stage held shared as a whole is one step; a check inside a step adds none)."""
    report = timed_neg[str(2 << 30)]
    steps, stages = report["shared_steps"], report["stages"]
    assert set(steps) >= {"runner start", "import", "trials", "timing", "after timing",
                          "runner end"}, steps
    assert steps["runner start"][0] == steps["runner end"][0] == 1, steps
    assert steps["import"][0] == 1, steps  # a stage held as a whole: one step
    # One step per timed case's call with new values after timing, not the stage as one.
    assert steps["after timing"][0] == report["timed"], steps
    # The timing stage, per timed case: its hand-over (a step for each of its three input
    # sets), its baseline's untimed first call (each measured afresh here) and, after the
    # hold, the check of its samples.
    assert steps["timing"][0] == 5 * report["timed"], steps
    for stage, (count, total, longest) in steps.items():
        assert 0 < longest <= total <= stages.get(stage, total) + 1e-3, (stage, steps, stages)
