"""Baseline timings a judge keeps for the same operator's next candidates: measured once per
(operator, case, dtype, timer, settings), said to be reused, and never shared across settings."""

from __future__ import annotations

from kgb_core.evaluation.baselines import BaselineCache
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry
from kgb_core.timing import Timing


def _timing(ms: float) -> Timing:
    return Timing(median_ms=ms, min_ms=ms, cv=0.0, repetitions=3, label="test")


def test_a_baseline_is_measured_once_per_key_and_the_oldest_goes_first():
    cache = BaselineCache(max_entries=2)
    measured = []

    def measure(ms: float):
        return lambda: (measured.append(ms), _timing(ms))[1]

    first, reused = cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}), measure(1))
    assert not reused and first.timing.median_ms == 1 and first.measured_at.endswith("+00:00")
    again, reused = cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}), measure(9))
    assert reused and again is first and measured == [1]
    other = cache.key("aten.neg", "c", "float32", "t", {"rep_ms": 50})  # other settings
    assert not cache.get_or_measure(other, measure(2))[1]
    cache.get_or_measure(cache.key("aten.neg", "d", "float32", "t", {}), measure(3))
    # Two entries at most: the first key was the oldest, and is measured again.
    assert not cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}),
                                    measure(4))[1]
    assert measured == [1, 2, 3, 4] and cache.hits == 1


def test_a_judge_times_the_baseline_for_its_first_candidate_and_reuses_it_after():
    registry = load_registry()
    source = registry.operator("aten.neg").reference_kernel()
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        first = evaluator.evaluate("aten.neg", source)
        second = evaluator.evaluate("aten.neg", source)
    assert first.verdict == second.verdict == "pass"
    assert first.timings and all(not t["reference_reused"] for t in first.timings)
    assert all(t["reference_reused"] for t in second.timings)
    assert [t["reference"] for t in second.timings] == [t["reference"] for t in first.timings]
    assert [t["reference_measured_at"] for t in second.timings] == \
        [t["reference_measured_at"] for t in first.timings]
    # The candidate is timed afresh every time.
    assert second.timings[0]["candidate"] is not None
