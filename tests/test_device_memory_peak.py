"""How much device memory a job held: the judge's own count and its runner's, with every
result (``Backend.device_memory_peak``). How many jobs fit on a device at once is decided by
it: on an H100, six timed jobs at a sweep's start ran out of memory beside each other."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import CPU_BACKEND_PRELUDE, script_report

from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry

# aten.neg's reference, and 400 MB of host memory written and kept.
_HOARDER = '''

_KEPT = []


def kernel(*args):
    _KEPT.append(b"x" * 400_000_000)
    return _reference(*args)
'''


def test_a_result_carries_the_judges_and_the_runners_peaks(monkeypatch):
    import kgb_test_plugins

    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    backend = registry.backend("cpu_peakcount")
    reference = registry.operator("aten.neg").reference_kernel()
    hoarder = reference.replace("def kernel(", "def _reference(") + _HOARDER
    # The static screen would refuse the hoarder's module-level list on sight; it is off, as
    # the list is only a way to hold memory here.
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False, screen=False)
    monkeypatch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
    monkeypatch.setenv("PYTHONPATH", str(kgb_test_plugins.KERNELS.parent))
    with Evaluator.for_backend(backend, settings) as evaluator:
        plain = evaluator.evaluate("aten.neg", reference)
        hoarding = evaluator.evaluate("aten.neg", hoarder)
    assert plain.verdict == hoarding.verdict == "pass", (plain.message, hoarding.message)
    assert plain.device_peak_judge_bytes > 0 and plain.device_peak_runner_bytes > 0
    # The runner's count is its own process's: the hoarder's 400 MB show there alone.
    assert hoarding.device_peak_runner_bytes >= plain.device_peak_runner_bytes + 300_000_000
    assert hoarding.device_peak_judge_bytes < plain.device_peak_judge_bytes + 300_000_000
    # The judge's count by stage: every stage run has one, and the job's peak is the largest.
    for result in (plain, hoarding):
        assert set(result.judge_peak_by_stage) == set(result.stage_s), result.judge_peak_by_stage
        assert result.device_peak_judge_bytes >= max(result.judge_peak_by_stage.values()) > 0


def test_the_cpu_backend_keeps_no_count():
    """The interpreter's tensors are the host's: no device count (None, not 0, in results)."""
    assert load_registry().backend("cpu").device_memory_peak(reset=True) is None


@pytest.mark.parametrize("initialized", [True, False])
def test_a_torch_device_reads_and_resets_its_allocators_peak(initialized):
    from kgb_core.backends import ChipProfile, Quirks
    from kgb_core.torch_device import TorchDeviceBackend

    resets = []
    module = SimpleNamespace(is_initialized=lambda: initialized,
                             max_memory_reserved=lambda: 3 << 30,
                             reset_peak_memory_stats=lambda: resets.append(1))
    attributes = {"device_module_name": "fake", "probe": lambda self: None,
                  "device_module": lambda self: module,
                  "profile": ChipProfile(name="v", quirks=Quirks(device_type="fake"))}
    backend = type("VendorBackend", (TorchDeviceBackend,), attributes)()
    if not initialized:  # never touched the device: nothing held, and no context made
        assert backend.device_memory_peak(reset=True) == 0 and not resets
        return
    assert backend.device_memory_peak() == 3 << 30 and not resets
    assert backend.device_memory_peak(reset=True) == 3 << 30 and resets == [1]


STAGE_PEAKS = r"""
import json, os, sys
""" + CPU_BACKEND_PRELUDE + r"""
GIB = 1 << 30
reads = []


def peak(reset=False):
    # The judge's reset at the job's start, then one read (and reset) at each stage's end:
    # 7 GiB in the first stage, 1 GiB in every later one and at the job's end.
    reads.append(reset)
    return 0 if len(reads) == 1 else (7 * GIB if len(reads) == 2 else GIB)


backend.device_memory_peak = peak
judge = Judge(backend, registry)
neg = registry.operator("aten.neg")
result = judge.evaluate_spec(neg, neg.reference_kernel(), seeds=[0], timing=False)
judge.close()
print(json.dumps({"verdict": result.verdict, "message": result.message, "reads": reads,
                  "by_stage": result.judge_peak_by_stage,
                  "peak": result.device_peak_judge_bytes}))
"""


def test_the_jobs_peak_is_the_largest_of_its_stages_counts():
    """Each stage's end reads the judge's count and starts a new one; the job's peak is then
    the largest, though the count at its end holds only the last stretch."""
    report = script_report(STAGE_PEAKS, timeout=300)
    assert report["verdict"] == "pass", report["message"]
    by_stage = report["by_stage"]
    assert list(by_stage.values())[0] == 7 << 30 and set(list(by_stage.values())[1:]) == {1 << 30}
    assert report["peak"] == 7 << 30
    assert report["reads"][0] and all(report["reads"][1:len(by_stage) + 1])  # stages reset
