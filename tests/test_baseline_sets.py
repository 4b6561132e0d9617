"""The baseline is timed on the judge's pristine sets themselves where it only reads them.

A judge keeps each timed case's input sets pristine through the hold, to compare the
candidate's sampled outputs on. Timing the baseline on a copy of every set held one more batch
of the device's memory per job, and on a shared GPU a job's memory decides how many others
run beside it (job_memory.py). So the copies are made only where the operator writes its
arguments; a baseline that writes an argument it does not declare is caught by the tensors'
version counters, since the samples would then be compared on values no candidate saw. Real
judge, CPU backend, real runners.
"""

from __future__ import annotations

import pytest
from conftest import CPU_BACKEND_PRELUDE, MEASURE_SPY, script_report

SETS_SCRIPT = r"""
import dataclasses, json, os, sys
""" + CPU_BACKEND_PRELUDE + MEASURE_SPY + r"""
drawn = []  # every tensor a draw made, kept alive: their storages are the pristine ones


def evaluate(op, writes):
    spec = registry.operator(op)
    seen = []  # for each baseline call the timer made: whether its first tensor was drawn

    def draw(ctx):
        inputs = list(spec.make_inputs(ctx))
        drawn.extend(t for t in inputs if hasattr(t, "data_ptr"))
        return inputs

    def baseline(*args):
        if running["warmed"] is not None:  # a timer is measuring
            seen.append(any(args[0].data_ptr() == t.data_ptr() for t in drawn))
            if writes:
                args[0].add_(0)  # a write that changes no value, only the version
        return spec.reference(*args)

    judge = Judge(backend, registry)  # its own kept baselines: each is measured
    try:
        result = judge.evaluate_spec(dataclasses.replace(spec, make_inputs=draw,
                                                         baseline=baseline),
                                     spec.reference_kernel(), seeds=[0], timing=True)
    finally:
        judge.close()
    return {"verdict": result.verdict, "message": result.message, "seen": seen,
            "timed": len(result.timings)}


reports = {"reads": evaluate("aten.neg", False), "writes": evaluate("aten.neg", True),
           "declared": evaluate(sys.argv[1], False)}
print(json.dumps(reports))
"""


@pytest.fixture(scope="module")
def baseline_sets() -> dict:
    return script_report(SETS_SCRIPT, "aten.add_", timeout=300)


def test_a_baseline_that_only_reads_is_timed_on_the_pristine_sets(baseline_sets):
    report = baseline_sets["reads"]
    assert report["verdict"] == "pass", report["message"]
    assert report["timed"] >= 1 and report["seen"] and all(report["seen"]), report


def test_an_operator_that_writes_its_arguments_times_its_baseline_on_copies(baseline_sets):
    report = baseline_sets["declared"]
    assert report["verdict"] == "pass", report["message"]
    assert report["seen"] and not any(report["seen"]), report


def test_a_baseline_that_writes_what_its_operator_does_not_declare_is_a_harness_error(
        baseline_sets):
    report = baseline_sets["writes"]
    assert report["verdict"] == "harness_error", report
    assert "wrote its inputs" in report["message"] and "mutated_args" in report["message"]
