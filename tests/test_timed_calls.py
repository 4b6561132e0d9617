"""The runner's timed calls (kgb_core/evaluation/runner.py, ``TimedCalls``) under a real timer:
no two calls see one tensor in one state, every value set is used, and the sample the judge
compares is drawn over every call with the values each call saw."""

from __future__ import annotations

import torch

from kgb_core.evaluation.runner import EVERY_CALL_UP_TO, TimedCalls, scale_values, value_scale
from kgb_core.timing import TimingSettings, WallClockTimer


class _Counter:
    count = 0


def _sets():
    return [[torch.full((8,), float(value))] for value in (1.0, 2.0, 3.0)]


def test_no_timed_call_sees_a_tensor_in_a_state_an_earlier_call_saw():
    """A cache keyed on identity, pointer, version, shape or content never hits."""
    seen, keys, contents = [], set(), set()
    counter = _Counter()

    def kernel(x):
        key = (id(x), x.data_ptr(), x._version, tuple(x.shape))
        assert key not in keys, "a timed call saw a tensor in a state seen before"
        keys.add(key)
        content = tuple(x.tolist())
        assert content not in contents, "a timed call saw values an earlier call saw"
        contents.add(content)
        seen.append(float(x[0]))
        counter.count += 1
        return x * 2

    calls = TimedCalls(kernel, counter, _sets(), sample=2, seed=5)
    timer = WallClockTimer(TimingSettings(warmup_ms=1.0, rep_ms=3.0, min_repetitions=12),
                           lambda: None, label="test")
    timer.measure(calls, prepare=calls.prepare)
    assert calls.count == len(seen) >= 12 and calls.launchless == 0
    # Every value set is used, each call's scaled by 1 + 1/64 to 1.25 (disjoint ranges here).
    ranges = [(base * (1 + 2.0 ** -6), base * 1.25) for base in (1.0, 2.0, 3.0)]
    used = [next(i for i, (low, high) in enumerate(ranges) if low <= v <= high) for v in seen]
    assert set(used) == {0, 1, 2}


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
    for index, values, scaled, output in calls.samples:
        assert scaled == index  # every call was prepared
        expected = torch.full((8,), float(values + 1))
        scale_values([expected], scaled)
        assert torch.equal(output, expected * 2)
    assert len({index for index, _, _, _ in calls.samples}) == 3


def test_a_call_that_launches_nothing_is_counted():
    counter = _Counter()
    calls = TimedCalls(lambda x: x, counter, _sets(), sample=0, seed=0)
    calls.prepare()
    calls()
    assert calls.launchless == 1 and calls.samples == []


def test_the_scales_never_repeat_and_stay_in_range():
    scales = [value_scale(index) for index in range(5000)]
    assert len(set(scales)) == len(scales)
    assert all(1.0 + 2.0 ** -6 <= scale <= 1.25 for scale in scales)
    assert value_scale(-1) == 1.0


def _run(calls, count):
    for _ in range(count):
        calls.prepare()
        calls()
    calls.finish()
    return calls.sample_entries()


def _doubling(counter):
    def kernel(x):
        counter.count += 1
        return x * 2
    return kernel


def test_every_call_goes_back_while_there_are_few():
    """A candidate that cheats in two of five calls cannot slip past a sample of two."""
    counter = _Counter()
    entries = _run(TimedCalls(_doubling(counter), counter, _sets(), sample=2, seed=3),
                   EVERY_CALL_UP_TO)
    assert [entry[0] for entry in entries] == list(range(EVERY_CALL_UP_TO))
    many = _run(TimedCalls(_doubling(counter), counter, _sets(), sample=2, seed=3),
                EVERY_CALL_UP_TO + 1)
    assert len(many) == 2


def test_written_arguments_go_back_as_each_sampled_call_left_them():
    """An operator that writes its argument (and returns it): the next call on the same set
    overwrites it, so the runner copies it first, outside the timed region."""
    counter = _Counter()

    def add_one_in_place(x):
        counter.count += 1
        return x.add_(1.0)

    entries = _run(TimedCalls(add_one_in_place, counter, _sets(), sample=2, seed=7,
                              written=(0,)), 7)
    assert len(entries) == 7
    for index, values, scaled, output, arguments in entries:
        expected = torch.full((8,), float(values + 1))
        scale_values([expected], scaled)
        assert torch.equal(arguments[0], expected + 1), index
        assert torch.equal(output, arguments[0])
