"""The shared timing policy: repetition counts from an estimate, the median reported."""

from __future__ import annotations

import time

from kgb_core.config import load_config
from kgb_core.stats import median_interval, relative_median_interval
from kgb_core.timing import TimingSettings, WallClockTimer, still_settling


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


def test_a_slow_calls_samples_stop_at_their_time_budget():
    """A call of seconds (a baseline looping in Python) is sampled while its samples fit
    slow_call_budget_ms: the device is held alone meanwhile. Scripted samples of 800 ms under
    a 2000 ms budget: two (1600 ms), not three; of 1500 ms: one; of 300 ms: all three."""
    settings = TimingSettings(warmup_ms=25.0, rep_ms=100.0, slow_call_repetitions=3,
                              slow_call_budget_ms=2000.0)
    for sample_ms, taken in ((800.0, 2), (1500.0, 1), (300.0, 3)):
        calls = []
        timer = _Scripted(settings, [sample_ms] * 5)
        timing = timer.measure(lambda: calls.append(1))
        assert timing.repetitions == taken, (sample_ms, timing)
        assert len(calls) == 1 + taken, "the untimed first call, then the samples"
        assert timing.median_ms == sample_ms


def test_a_config_sets_the_slow_call_sample_count(tmp_path):
    path = tmp_path / "kgb.toml"
    path.write_text("[timing]\nslow_call_repetitions = 5\n")
    settings = TimingSettings.from_mapping(load_config(path).timing_settings, TimingSettings())
    assert settings.slow_call_repetitions == 5


class _Scripted(WallClockTimer):
    """Samples from a script instead of a clock: the policy alone, with no timing noise."""

    def __init__(self, settings: TimingSettings, samples) -> None:
        super().__init__(settings, lambda: None, label="scripted")
        self.samples = iter(samples)

    def time_once_ms(self, fn) -> float:
        self._before()  # as every real timer does: the prepare before each timed call
        fn()
        return next(self.samples)


def _adaptive(bound: float, rep_ms: float = 1000.0) -> TimingSettings:
    """An estimate of 1 ms: the budget buys rep_ms repetitions (up to 1000)."""
    return TimingSettings(warmup_ms=0.5, rep_ms=rep_ms, min_repetitions=5,
                          max_repetitions=1000, median_interval=bound, median_floor=20)


def test_repetitions_stop_once_the_median_is_known():
    """Steady samples: the first batch (the floor's 20 of a budget's 1000) and one more, which
    agrees with it, pin the median."""
    steady = [1.0] * 3 + [1.0 + 0.001 * (i % 5) for i in range(2000)]
    timing = _Scripted(_adaptive(0.01), steady).measure(lambda: None)
    assert timing.repetitions == 40 and abs(timing.median_ms - 1.002) < 1e-9


def test_noisy_samples_take_more_batches_never_past_the_budget():
    """Samples spread over +-20 %: batches double the count until the interval is within 1 %,
    and never past the fixed budget's count."""
    noisy = [1.0] * 3 + [0.8 + 0.4 * ((i * 7919) % 101) / 100 for i in range(2000)]
    narrow = _Scripted(_adaptive(0.01), noisy).measure(lambda: None)
    assert narrow.repetitions in (40, 80, 160, 320, 640, 1000)
    capped = _Scripted(_adaptive(0.001, rep_ms=50.0), noisy).measure(lambda: None)
    assert capped.repetitions == 50
    fixed = _Scripted(_adaptive(0.0, rep_ms=50.0), noisy).measure(lambda: None)
    assert fixed.repetitions == 50  # off: the budget's count, as before
    short = _Scripted(_adaptive(0.01, rep_ms=8.0), noisy).measure(lambda: None)
    assert short.repetitions == 8, "a budget below the floor is the ceiling"


def test_a_speed_still_changing_after_the_warm_up_is_dropped_not_kept():
    """The first 30 timed calls run 10 % slow, then the clock settles (a bf16 mm on the H100
    after its warm-up). The first batch is all slow, so it never decides alone; the second's
    median differs from the whole's, so the timing goes on; then the halves disagree and the
    slow half goes: the median is the settled speed, not the first batch's slow one."""
    ramp = [1.0] * 3 + [1.1] * 30 + [1.0 + 0.001 * (i % 5) for i in range(2000)]
    timing = _Scripted(_adaptive(0.01), ramp).measure(lambda: None)
    assert abs(timing.median_ms - 1.002) < 1e-9, timing
    assert timing.repetitions < 100, "settled, it stops long before the budget's 1000"
    steady = [1.0] * 3 + [1.0 + 0.001 * (i % 5) for i in range(2000)]
    assert not still_settling(steady[3:83]) and still_settling(ramp[3:83])


def test_the_warm_up_ends_when_its_time_is_up_on_the_host():
    """A call whose kernel is quick but whose host side is slow (a runner's recorded call) warms
    up for warmup_ms of the host's time, not for warmup_ms over the kernel's estimate calls."""
    calls = []
    settings = TimingSettings(warmup_ms=20.0, rep_ms=0.002, min_repetitions=2,
                              max_repetitions=1000)
    timer = _Scripted(settings, [0.001] * 2000)  # the estimate asks for 1000 warm-up calls
    timing = timer.measure(lambda: (calls.append(1), time.sleep(0.002)))
    # Less the untimed first call and the three of the estimate: at 2 ms or more a call, at
    # most 10 fit in 20 ms (the estimate asked for 1000).
    warm_up = len(calls) - 4 - timing.repetitions
    assert timing.repetitions == 2 and 1 <= warm_up <= 10, warm_up


def test_the_medians_interval_is_order_statistics_around_the_middle():
    values = list(range(1, 101))  # 1..100: ranks 50 -+ 9.8
    low, high = median_interval(values)
    assert (low, high) == (41, 60)
    assert relative_median_interval(values) == (60 - 41) / 2 / 50.5
    assert median_interval([3.0]) == (3.0, 3.0)


def test_a_config_sets_the_median_interval(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("[timing]\nmedian_interval = 0.01\n")
    assert load_config(path).timing_settings["median_interval"] == 0.01


def test_a_warmed_call_is_not_called_untimed_again():
    """``measure(fn, warmed=True)``: the caller made the untimed first call (the judge makes a
    baseline's beside other judges' checks, before it holds the device alone), so the timer
    makes one call fewer, and no prepare for it: one prepare before every call either way.
    Scripted samples keep the counts exact: a slow call (one sample of 1500 ms fills the 2000 ms
    budget), a fast one with a warm-up budget (3 estimate calls, 2 warm-up calls of the
    estimate's 500 ms in 1000 ms, then 10 repetitions) and one without (the interpreter's)."""
    policies = {
        "slow": (TimingSettings(warmup_ms=25.0, rep_ms=100.0, slow_call_budget_ms=2000.0),
                 1500.0, 1 + 1),
        "fast": (TimingSettings(warmup_ms=1000.0, rep_ms=5000.0, min_repetitions=2,
                                max_repetitions=10), 500.0, 1 + 3 + 2 + 10),
        "no warm-up": (TimingSettings(warmup_ms=0.0, rep_ms=20.0, min_repetitions=2,
                                      max_repetitions=5), 8.0, 1 + 2),
    }
    for name, (settings, sample_ms, calls_unwarmed) in policies.items():
        counts = {}
        for warmed in (False, True):
            calls, prepared = [], []
            timer = _Scripted(settings, [sample_ms] * 100)
            timing = timer.measure(lambda: calls.append(1), lambda: prepared.append(1),
                                   warmed=warmed)
            counts[warmed] = len(calls)
            assert len(prepared) == len(calls), (name, warmed)
            assert timing.median_ms == sample_ms, (name, timing)
        assert counts == {False: calls_unwarmed, True: calls_unwarmed - 1}, (name, counts)
