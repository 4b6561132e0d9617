"""A reference that computes on the host runs with the device's lock set aside (issue 25).

vLLM's convert_vertical_slash_indexes has a reference that replays a CUDA state machine in a
Python loop: 20 s a call on the H100. Each call sat inside a check step held shared, and a step
of 20 to 40 s kept every judge about to time waiting, and every judge behind that one (the
H100 sweep at 45f5df4: 108 s of shared steps for that operator alone). An operator that says
its reference is a host computation (``OperatorSpec.host_reference``) now gets host copies and
the lock let go while it runs. Here a real judge (CPU backend, real sandboxed runners, a real
lock file) checks and times aten.neg with a slow reference that looks, at every call, whether
another process could take the device alone at that moment.
"""

from __future__ import annotations

import pytest
from conftest import CPU_BACKEND_PRELUDE, LOCK_PROBE, script_report

SLOW_S = 0.05  # each reference call's host work (about a hundred calls a run)

HOST_SCRIPT = r"""
import dataclasses, fcntl, json, os, sys, time
""" + CPU_BACKEND_PRELUDE + LOCK_PROBE + r"""
from kgb_core.evaluation.device_lock import DeviceLock

path = os.path.join(sys.argv[1], "cpu-0.lock")
lock = DeviceLock(path)
judge = Judge(backend, registry, device_lock=lock)
probe = os.open(path, os.O_RDWR)  # another open file: what another judge's timing would take
neg = registry.operator("aten.neg")
calls = []


def slow_reference(*args):
    calls.append({"free": lock_free(probe), "devices": sorted({str(a.device) for a in args
                                                    if hasattr(a, "device")})})
    time.sleep(float(sys.argv[2]))
    return neg.reference(*args)


reports = {}
for host in (False, True):
    calls.clear()
    spec = dataclasses.replace(neg, reference=slow_reference, host_reference=host,
                               baseline=neg.timing_baseline)  # the baseline as it was
    result = judge.evaluate_spec(spec, neg.reference_kernel(), seeds=[0], timing=True)
    reports[str(host)] = {"verdict": result.verdict, "message": result.message,
                          "calls": list(calls), "timed": len(result.timings),
                          "shared_s": sum(total for _, total, _ in
                                          result.shared_steps.values()),
                          "steps": result.shared_steps, "parts": result.step_parts}
judge.close()
print(json.dumps(reports))
"""


@pytest.fixture(scope="module")
def slow_neg(tmp_path_factory) -> dict:
    """aten.neg with a slow reference, judged with a real lock: as a device reference, then
    as a host one."""
    return script_report(HOST_SCRIPT, str(tmp_path_factory.mktemp("lock")), str(SLOW_S),
                         timeout=300)


def test_a_device_reference_runs_with_the_device_held(slow_neg):
    report = slow_neg["False"]
    assert report["verdict"] == "pass", report["message"]
    assert report["calls"] and not any(call["free"] for call in report["calls"]), report


def test_a_host_reference_runs_with_the_lock_let_go_and_the_verdict_unchanged(slow_neg):
    report = slow_neg["True"]
    assert report["verdict"] == "pass", report["message"]
    assert report["timed"] >= 1, "its timed samples were compared too"
    calls = report["calls"]
    assert calls and all(call["free"] for call in calls), calls
    assert all(call["devices"] == ["cpu"] for call in calls), calls


def test_a_host_references_seconds_are_no_steps(slow_neg):
    """The steps held shared no longer hold the reference's seconds: what the judge about to
    time waited for, in the old way, is gone from the steps' sum."""
    device, host = slow_neg["False"], slow_neg["True"]
    # The two runs draw their probes at random, so their counts of calls differ a little.
    calls = min(len(host["calls"]), len(device["calls"]))
    assert device["shared_s"] - host["shared_s"] >= 0.8 * calls * SLOW_S, (device, host)


def test_a_steps_parts_say_where_its_seconds_went(slow_neg):
    """``EvalResult.step_parts``: the slow reference shows in the trials' steps as the judge's
    "reference and comparison", inside the steps' seconds, beside the runner's own split of
    its call; set aside, the reference's seconds leave that part as they leave the steps."""
    for host in ("False", "True"):
        report = slow_neg[host]
        count, total, _ = report["steps"]["trials"]
        parts = report["parts"]["trials"]
        assert {"draw", "copies", "pack", "request", "unpack", "reference and comparison",
                "runner inputs", "runner call", "runner launches",
                "runner reply"} <= set(parts), parts
        # The interpreter runs each kernel inside its launch: most of the call.
        assert 0.5 * parts["runner call"] < parts["runner launches"] <= parts["runner call"], parts
        judged = sum(seconds for name, seconds in parts.items() if not name.startswith("runner"))
        assert judged <= total + 1e-3, (parts, total)
        # Of the launches, compiling: nothing in the interpreter, which compiles no kernel.
        assert parts["runner compile"] == 0.0, parts
        runner = sum(seconds for name, seconds in parts.items()
                     if name.startswith("runner")
                     and name not in ("runner launches", "runner compile"))
        assert runner <= parts["request"] + 1e-3, parts
        reference = parts["reference and comparison"]
        if host == "False":
            assert reference >= 0.9 * count * SLOW_S, (parts, count)
        else:
            assert reference < 0.5 * count * SLOW_S, (parts, count)
