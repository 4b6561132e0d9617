"""A judge whose job raised (a harness error: on a GPU, mostly the judge's own allocation
running out of device memory beside other checks) must judge its next job as a fresh judge
would.

On an H100 under `kgb serve` with four check workers, every softmax control whose first try
ended in the judge's ``OutOfMemoryError`` got ``tampering`` when the pool ran it again alone on
the same judge: the raising job's runner folder was left in the work folder, and the next
job's look for files written outside its own folder found it. Here a real judge (CPU
backend, real sandboxed runners) runs a job whose input maker raises, then the known-good
kernel, which must pass with no file blamed on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import CPU_JUDGE_PRELUDE, REPO

AFTER_A_RAISE = r"""
import dataclasses, json, os
""" + CPU_JUDGE_PRELUDE + r"""
import torch

neg = registry.operator("aten.neg")
source = neg.reference_kernel()
calls = []

def raising_inputs(ctx):
    calls.append(1)
    if len(calls) >= int(os.environ["RAISE_AT_CALL"]):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1024.00 MiB.")
    return neg.make_inputs(ctx)

report = {}
try:
    judge.evaluate_spec(dataclasses.replace(neg, make_inputs=raising_inputs), source,
                        seeds=[0], timing=False)
    report["raised"] = None
except torch.OutOfMemoryError as error:
    report["raised"] = str(error)
report["left"] = sorted(os.listdir(judge.template.work))
result = judge.evaluate_spec(neg, source, seeds=[0], timing=False)
report["verdict"], report["message"] = result.verdict, result.message
judge.close()
print(json.dumps(report))
"""


def _after_a_raise(raise_at_call: int) -> dict:
    done = subprocess.run([sys.executable, "-c", AFTER_A_RAISE], capture_output=True,
                          text=True, cwd=str(REPO), timeout=300,
                          env={**os.environ, "RAISE_AT_CALL": str(raise_at_call)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_job_after_a_raising_one_is_judged_as_by_a_fresh_judge():
    report = _after_a_raise(raise_at_call=2)  # the first draw made, the runner up
    assert report["raised"] and "out of memory" in report["raised"]
    assert report["verdict"] == "pass", report
    # Nothing of the raising job's runner is left beside the template's own folder.
    assert len(report["left"]) == 1, report["left"]


def test_a_job_that_raises_at_its_first_draw_leaves_nothing_either():
    report = _after_a_raise(raise_at_call=1)
    assert report["raised"] and report["verdict"] == "pass", report
    assert len(report["left"]) == 1, report["left"]


RELEASED_AFTER_AN_ERROR = r"""
import dataclasses, gc, json, os
""" + CPU_JUDGE_PRELUDE + r"""
import torch
from kgb_core.evaluation import judge as judge_module
from kgb_core.evaluation.checker import Evaluation

neg = registry.operator("aten.neg")
calls = []

def raising_inputs(ctx):
    calls.append(1)
    if len(calls) >= 2:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1024.00 MiB.")
    return neg.make_inputs(ctx)

judge.registry = type("Registry", (), {"operator": staticmethod(
    lambda op: dataclasses.replace(neg, make_inputs=raising_inputs))})()
alive_at_release = []

def release():
    alive_at_release.append(sum(isinstance(o, Evaluation) for o in gc.get_objects()))

judge.backend.release_cached_memory = release
message = judge_module.answer(judge, {"job": 1, "op": "aten.neg", "source": neg.reference_kernel(),
                                      "seeds": [0], "timing": False})
judge.close()
print(json.dumps({"type": message["type"], "alive_at_release": alive_at_release}))
"""


def test_after_a_harness_error_the_device_cache_is_emptied_once_the_evaluation_is_gone():
    """The judge empties its device cache after every job, but a job that raised left its
    evaluation (inputs, references: GiBs on a GPU) alive in the traceback until the error was
    sent; the last emptying must come after it is gone."""
    done = subprocess.run([sys.executable, "-c", RELEASED_AFTER_AN_ERROR], capture_output=True,
                          text=True, cwd=str(REPO), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["type"] == "harness_error"
    assert report["alive_at_release"] and report["alive_at_release"][-1] == 0, report
