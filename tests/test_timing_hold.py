"""Only the timed calls hold the device alone (issue 25).

While one judge holds its device's lock exclusive, every other judge's check waits: on the
H100 the hold was 6.7 s an operator, of which drawing the timed input sets and handing them to
the runner took 1.5 s, and it bounded a sweep at about 9 operators a minute whatever the
workers. Here a real judge (CPU backend, real sandboxed runners, a real lock file) times
aten.neg's reference while every runner request and every input draw records whether the
device was held alone at that moment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

HOLD_SCRIPT = r"""
import dataclasses, json, os, sys
from kgb_core.plugins import load_registry
registry = load_registry()
backend = registry.backend("cpu")
for key, value in backend.worker_environment().items():
    os.environ.setdefault(key, value)
from kgb_core.evaluation import checker
from kgb_core.evaluation.device_lock import DeviceLock
from kgb_core.evaluation.judge import Judge
from kgb_core.evaluation.runners import RunnerChannel

checker.TIMED_BATCH_BYTES = int(sys.argv[1])


class CountingLock(DeviceLock):
    takes = 0

    def exclusive(self):
        if not self._exclusive_depth:
            CountingLock.takes += 1
        return super().exclusive()


lock = CountingLock(os.path.join(sys.argv[2], "cpu-0.lock"))
judge = Judge(backend, registry, device_lock=lock)
log = []
request = RunnerChannel.request


def logged(channel, payload, deadline):
    log.append((payload.get("op"), lock._exclusive_depth))
    return request(channel, payload, deadline)


RunnerChannel.request = logged
neg = registry.operator("aten.neg")


def drawn(ctx):
    log.append(("draw", lock._exclusive_depth))
    return neg.make_inputs(ctx)


result = judge.evaluate_spec(dataclasses.replace(neg, make_inputs=drawn),
                             neg.reference_kernel(), seeds=[0], timing=True)
judge.close()
print(json.dumps({"verdict": result.verdict, "message": result.message, "log": log,
                  "takes": CountingLock.takes, "timed": len(result.timings),
                  "alone": result.device_alone_s, "stages": result.stage_s}))
"""


def _timed_neg(tmp_path, batch_bytes: int) -> dict:
    done = subprocess.run([sys.executable, "-c", HOLD_SCRIPT, str(batch_bytes), str(tmp_path)],
                          capture_output=True, text=True, cwd=str(REPO), timeout=300,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_draws_and_hand_overs_happen_beside_other_checks_only_timings_hold_the_device(tmp_path):
    report = _timed_neg(tmp_path, 2 << 30)
    assert report["verdict"] == "pass", report["message"]
    held = {(what, depth) for what, depth in report["log"]}
    assert ("time", 1) in held and ("time", 0) not in held, held
    assert ("put", 0) in held and ("put", 1) not in held, held
    assert ("draw", 1) not in held, "an input was drawn while the device was held alone"
    assert report["takes"] == 1, "every timed case of one operator under one hold"
    assert report["alone"] > 0 and set(report["stages"]) >= {"trials", "timing"}, report


def test_cases_past_the_batch_budget_take_a_hold_each(tmp_path):
    report = _timed_neg(tmp_path, 1)
    assert report["verdict"] == "pass", report["message"]
    assert report["timed"] >= 2 and report["takes"] == report["timed"], report
