"""A baseline's untimed first call is made beside other judges' checks, not in the hold.

While one judge holds its device's lock exclusive every other judge waits. On the H100 the
baseline of vllm.convert_vertical_slash_indexes (a Python loop, 20 s a call) held the device
alone 38 s: the timer's untimed first call, then one sample, and nothing is measured in the
first. Here real judges (CPU backend, real sandboxed runners, a real lock file) time
aten.neg's reference with a baseline that records, for each call, how the device was held
and whether a timer was measuring (and whether it was told the call was warmed).
"""

from __future__ import annotations

import pytest
from conftest import CPU_BACKEND_PRELUDE, MEASURE_SPY, script_report

from kgb_core.evaluation.sandbox import find_sandbox

WARM_UP_SCRIPT = r"""
import dataclasses, json, os, sys
""" + CPU_BACKEND_PRELUDE + r"""
from kgb_core.evaluation.baselines import BaselineCache, BaselineStore
from kgb_core.evaluation.device_lock import DeviceLock
from kgb_core.evaluation.sandbox import find_sandbox
""" + MEASURE_SPY + r"""
folder = sys.argv[1]
lock = DeviceLock(os.path.join(folder, "cpu-0.lock"))
calls = []  # each baseline call: (held alone, held shared, the running measure's warmed)
neg = registry.operator("aten.neg")
judge_lock = {"lock": None}


def counted(*args):
    held = judge_lock["lock"]
    calls.append((getattr(held, "_exclusive_depth", 0), getattr(held, "_shared_depth", 0),
                  running["warmed"]))
    return neg.reference(*args)


spec = dataclasses.replace(neg, baseline=counted)


def evaluate(judge):
    measuring.clear()
    calls.clear()
    judge_lock["lock"] = judge.device_lock
    result = judge.evaluate_spec(spec, neg.reference_kernel(), seeds=[0], timing=True)
    return {"verdict": result.verdict, "message": result.message,
            "calls": list(calls), "measuring": list(measuring),
            "repetitions": [t["reference"]["repetitions"] for t in result.timings],
            "reused": [t["reference_reused"] for t in result.timings],
            "warmed_s": [t.get("baseline_warmed_s") for t in result.timings],
            "hold_parts": [sorted(t["hold_s"]) for t in result.timings]}


store = os.path.join(folder, "baselines.sqlite")
reports = {}
shared = Judge(backend, registry, device_lock=lock,
               baselines=BaselineCache(store=BaselineStore(store)))
reports["fresh"] = evaluate(shared)
reports["kept"] = evaluate(shared)
shared.close()
if find_sandbox().sandboxed:  # unsandboxed, a judge keeps no stored baselines (judge.py)
    later = Judge(backend, registry, device_lock=lock,
                  baselines=BaselineCache(store=BaselineStore(store)))
    reports["stored"] = evaluate(later)
    later.close()
alone = Judge(backend, registry)  # one worker on its device: no lock
reports["alone"] = evaluate(alone)
alone.close()
print(json.dumps(reports))
"""


@pytest.fixture(scope="module")
def warm_ups(tmp_path_factory) -> dict:
    """aten.neg timed by judges sharing a device lock (a fresh baseline cache, the same
    cache again, a later judge on the stored baselines) and by one alone on its device."""
    return script_report(WARM_UP_SCRIPT, str(tmp_path_factory.mktemp("warm")), timeout=600)


def test_a_shared_devices_baseline_is_first_called_beside_the_checks(warm_ups):
    """Each timed case's baseline: one call with the lock shared and no timer running, all
    before the batch's hold; then, held alone, a timer told so makes only timed calls (the
    interpreter's policy times every call it makes: as many calls as repetitions)."""
    report = warm_ups["fresh"]
    assert report["verdict"] == "pass", report["message"]
    timed = len(report["repetitions"])
    assert timed >= 2 and not any(report["reused"]), report
    warm, measured = report["calls"][:timed], report["calls"][timed:]
    assert warm == [[0, 1, None]] * timed, "first calls: shared, before any timing"
    assert all(alone == 1 and warmed is True for alone, _, warmed in measured), measured
    assert len(measured) == sum(report["repetitions"]), "no untimed call inside the hold"
    assert report["measuring"] == [True] * timed
    assert all(seconds is not None and seconds >= 0 for seconds in report["warmed_s"])
    assert all(parts == ["baseline", "candidate", "runner"] for parts in report["hold_parts"])


def test_a_kept_baseline_gets_no_first_call(warm_ups):
    report = warm_ups["kept"]
    assert report["verdict"] == "pass", report["message"]
    assert all(report["reused"]) and report["calls"] == [] and report["measuring"] == []
    assert report["warmed_s"] == [None] * len(report["repetitions"])


@pytest.mark.skipif(not find_sandbox().sandboxed, reason="no OS sandbox: no stored baselines")
def test_a_stored_baseline_gets_no_first_call(warm_ups):
    """A later judge (a later sweep) reuses the stored baselines: nothing to warm."""
    report = warm_ups["stored"]
    assert report["verdict"] == "pass", report["message"]
    assert all(report["reused"]) and report["calls"] == [] and report["measuring"] == []
    assert report["warmed_s"] == [None] * len(report["repetitions"])


def test_a_judge_alone_on_its_device_times_as_before(warm_ups):
    """No lock (one worker a device): no call before the hold, and the timer makes its own
    untimed first call, one more call than repetitions each."""
    report = warm_ups["alone"]
    assert report["verdict"] == "pass", report["message"]
    timed = len(report["repetitions"])
    assert not any(report["reused"]) and report["measuring"] == [False] * timed
    assert all(warmed is False for _, _, warmed in report["calls"]), report["calls"]
    assert len(report["calls"]) == sum(report["repetitions"]) + timed
    assert report["warmed_s"] == [None] * timed
