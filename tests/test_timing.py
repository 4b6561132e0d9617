"""The shared timing policy: repetition counts from an estimate, the median reported."""

from __future__ import annotations

import time

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
