"""The shared timing policy: repetition counts from an estimate, the median reported."""

from __future__ import annotations

import time

from kgb_core.config import load_config
from kgb_core.timing import TimingSettings, WallClockTimer


def test_repetitions_follow_the_budget_within_bounds():
    settings = TimingSettings(warmup_ms=10, rep_ms=100, min_repetitions=5, max_repetitions=50)
    assert settings.repetitions_for(10.0, 100) == 10
    assert settings.repetitions_for(1000.0, 100) == 5
    assert settings.repetitions_for(0.001, 100) == 50


def test_wall_clock_timer_measures_a_known_sleep():
    settings = TimingSettings(warmup_ms=0, rep_ms=60, min_repetitions=3, max_repetitions=10)
    syncs = []
    timer = WallClockTimer(settings, lambda: syncs.append(1), label="test-wallclock")
    timing = timer.measure(lambda: time.sleep(0.01))
    assert 9.0 <= timing.median_ms < 40.0
    assert timing.repetitions >= 3 and timing.label == "test-wallclock"
    assert len(syncs) >= 2 * timing.repetitions, "every timed call is synchronized on both sides"


def test_without_a_warm_up_budget_no_timed_call_is_thrown_away():
    """The interpreter's policy: one untimed first call, then every timed call is a sample
    (the estimate's included), so a slow interpreted case costs 1 + repetitions calls."""
    calls = []
    settings = TimingSettings(warmup_ms=0.0, rep_ms=1.0, min_repetitions=2, max_repetitions=5)
    timer = WallClockTimer(settings, lambda: None, label="test-wallclock")
    timing = timer.measure(lambda: (calls.append(1), time.sleep(0.004)))
    assert timing.repetitions == 2  # the 1 ms budget allows only the minimum
    assert len(calls) == 1 + timing.repetitions


def test_with_a_warm_up_budget_the_estimate_calls_are_not_samples():
    """A GPU's policy for calls shorter than the budget: 3 estimate calls and the warm-up are
    thrown away, then the repetitions the budget buys."""
    calls = []
    settings = TimingSettings(warmup_ms=5.0, rep_ms=40.0, min_repetitions=2, max_repetitions=5)
    timer = WallClockTimer(settings, lambda: None, label="test-wallclock")
    timing = timer.measure(lambda: (calls.append(1), time.sleep(0.002)))
    assert timing.repetitions >= 2
    assert len(calls) >= 1 + 3 + timing.repetitions


def test_a_call_longer_than_the_whole_budget_is_sampled_a_few_times_without_warm_up():
    """min_repetitions of a call that outlasts rep_ms would cost that many budgets; such a
    call is sampled slow_call_repetitions times, its first timed call included."""
    calls = []
    settings = TimingSettings(warmup_ms=25.0, rep_ms=5.0, min_repetitions=10,
                              max_repetitions=100, slow_call_repetitions=3)
    timer = WallClockTimer(settings, lambda: None, label="test-wallclock")
    timing = timer.measure(lambda: (calls.append(1), time.sleep(0.02)))
    assert timing.repetitions == 3
    assert len(calls) == 1 + 3, "one untimed first call, then the three samples"
    assert 15.0 <= timing.median_ms < 80.0


def test_a_config_sets_the_slow_call_sample_count(tmp_path):
    path = tmp_path / "kgb.toml"
    path.write_text("[timing]\nslow_call_repetitions = 5\n")
    settings = TimingSettings.from_mapping(load_config(path).timing_settings, TimingSettings())
    assert settings.slow_call_repetitions == 5
