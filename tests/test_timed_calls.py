"""The runner's timed calls (kgb_core/evaluation/runner.py, ``TimedCalls``) under a real timer:
no two calls see one tensor in one state, every value set is used, and the sample the judge
compares is drawn over every call with the values each call saw."""

from __future__ import annotations

import torch

from kgb_core.evaluation.runner import TimedCalls
from kgb_core.timing import TimingSettings, WallClockTimer


class _Counter:
    count = 0


def _sets():
    return [[torch.full((8,), float(value))] for value in (1.0, 2.0, 3.0)]


def test_no_timed_call_sees_a_tensor_in_a_state_an_earlier_call_saw():
    """A cache keyed on identity, pointer, version and shape never hits."""
    seen, keys = [], set()
    counter = _Counter()

    def kernel(x):
        key = (id(x), x.data_ptr(), x._version, tuple(x.shape))
        assert key not in keys, "a timed call saw a tensor in a state seen before"
        keys.add(key)
        seen.append(float(x[0]))
        counter.count += 1
        return x * 2

    calls = TimedCalls(kernel, counter, _sets(), sample=2, seed=5)
    timer = WallClockTimer(TimingSettings(warmup_ms=1.0, rep_ms=3.0, min_repetitions=12),
                           lambda: None, label="test")
    timer.measure(calls, prepare=calls.prepare)
    assert calls.count == len(seen) >= 12 and calls.launchless == 0
    assert set(seen) == {1.0, 2.0, 3.0}
    # Consecutive calls on one storage set see other values (three sets, so every third call).
    assert all(seen[i] != seen[i + 3] for i in range(len(seen) - 3))


def test_the_sample_names_the_values_each_output_came_from():
    counter = _Counter()

    def kernel(x):
        counter.count += 1
        return x * 2

    calls = TimedCalls(kernel, counter, _sets(), sample=3, seed=11)
    for _ in range(40):
        calls.prepare()
        calls()
    assert len(calls.samples) == 3
    for index, values, output in calls.samples:
        assert torch.equal(output, torch.full((8,), 2.0 * (values + 1)))
    assert len({index for index, _, _ in calls.samples}) == 3


def test_a_call_that_launches_nothing_is_counted():
    counter = _Counter()
    calls = TimedCalls(lambda x: x, counter, _sets(), sample=0, seed=0)
    calls.prepare()
    calls()
    assert calls.launchless == 1 and calls.samples == []
