"""The runner's timed calls (kgb_core/evaluation/runner.py, ``TimedCalls``) under a real timer:
no two calls see one tensor in one state, every value set is used, and the sample the judge
compares is drawn over every call with the values each call saw."""

from __future__ import annotations

import torch

from kgb_core.evaluation.runner import EVERY_CALL_UP_TO, TimedCalls, value_scale, vary_values
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
    # Exactly 12 repetitions whatever the machine's speed: with rep_ms=3 a first call slower
    # than 3 ms (a loaded 2-core CI machine) took the slow-call path, 3 samples in all.
    timer = WallClockTimer(TimingSettings(warmup_ms=1.0, rep_ms=1000.0, min_repetitions=12,
                                          max_repetitions=12),
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
        vary_values([expected], scaled, None)
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
        vary_values([expected], scaled, None)
        assert torch.equal(arguments[0], expected + 1), index
        assert torch.equal(output, arguments[0])


def test_a_shift_variation_moves_only_the_arguments_named():
    """``timed_variation="shift"``: the named arguments get a constant added, the others keep
    the values drawn; the judge reproduces each call's inputs the same way."""
    sets = [[torch.full((4,), 1.0), torch.full((2,), 0.5)] for _ in range(2)]
    seen = []
    calls = TimedCalls(lambda x, p: seen.append((x.clone(), p.clone())) or x, _Counter(), sets,
                       sample=0, seed=0, variation={"mode": "shift", "args": [0]})
    for _ in range(4):
        calls.prepare()
        calls()
    for index, (x, p) in enumerate(seen):
        assert torch.equal(x, torch.full((4,), 1.0).add_(value_scale(index) - 1.0))
        assert torch.equal(p, torch.full((2,), 0.5)), "p is left as drawn"
    judged = [torch.full((4,), 1.0), torch.full((2,), 0.5)]
    vary_values(judged, 3, {"mode": "shift", "args": [0]})
    assert torch.equal(judged[0], seen[3][0]) and torch.equal(judged[1], seen[3][1])


def test_top_p_keeps_its_mask_when_shifted_and_loses_it_when_scaled():
    """Why apply_top_k_top_p's timed calls shift: its inputs put 1 - p halfway between two
    cumulative softmax sums. Shifting the logits leaves the mask as drawn; scaling them (and
    p) moves the boundary, so that summation order could decide a token."""
    from kgb_core.operators import InputContext
    from kgb_core.plugins import load_registry

    spec = load_registry().operator("vllm.apply_top_k_top_p")
    assert spec.timed_variation == "shift" and spec.timed_varied_args == (0,)
    case = next(c for c in spec.cases if c.name == "top_p")
    drawn = list(spec.make_inputs(InputContext(case, "float32", 0, "cpu")))
    mask = torch.isinf(spec.reference(*[t.clone() if t is not None else None for t in drawn]))
    moved = 0
    for index in range(12):
        for mode in ("shift", "scale"):
            inputs = [t.clone() if t is not None else None for t in drawn]
            vary_values(inputs, index, {"mode": mode, "args": [0] if mode == "shift" else None})
            changed = not torch.equal(torch.isinf(spec.reference(*inputs)), mask)
            if mode == "shift":
                assert not changed, f"a shift moved the top-p mask (call {index})"
            moved += changed
    assert moved, "scaling never moved the mask: the reason for shifting is gone"


def _prepared_values(sets, variation, calls_made):
    """Each set's tensors after ``calls_made`` prepared calls, and their version counters."""
    calls = TimedCalls(lambda *args: args[0] * 1, _Counter(), sets, sample=0, seed=0,
                       variation=variation)
    for _ in range(calls_made):
        calls.prepare()
        calls()
    return ([[t.clone() for t in one] for one in sets],
            [[t._version for t in one] for one in sets])


def test_each_varied_tensor_is_written_once_to_the_values_copying_then_varying_gave():
    """A timed call's new values cost one pass over each varied tensor (the device is held
    alone meanwhile), and are exactly what copying the values in and varying them gave."""
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.complex64):
        for variation in (None, {"mode": "shift", "args": [0]}):
            def sets():
                generator = torch.Generator().manual_seed(3)
                return [[torch.randn(64, generator=generator).to(dtype),
                         torch.arange(64, dtype=torch.int32) + value,
                         torch.randn(8, 8, generator=generator).to(dtype).t()]
                        for value in range(3)]

            written, versions = _prepared_values(sets(), variation, 7)
            for index, (one, counts) in enumerate(zip(written, versions)):
                last = max(i for i in range(7) if i % 3 == index)  # the call it holds
                values = TimedCalls(lambda x: x, _Counter(), sets(), 0, 0).values
                expected = [t.clone() for t in values[(last % 3 + last // 3) % 3]]
                vary_values(expected, last, variation)
                assert all(torch.equal(a, b) for a, b in zip(one, expected)), (dtype, variation)
                # Its preparations: one write per tensor each (never a copy, then a scaling).
                prepared = len([i for i in range(7) if i % 3 == index])
                assert counts == [prepared] * 3, (dtype, variation, counts)


def test_a_set_whose_tensors_share_memory_is_copied_then_varied_as_before():
    base = torch.arange(16, dtype=torch.float32)
    shared = [[base[:8], base[4:12]] for _ in range(1)]  # two views of one storage
    _, versions = _prepared_values(shared, None, 2)
    # Two calls on the one set: each a copy into both views and a scaling of both.
    assert versions[0][0] == versions[0][1] and versions[0][0] >= 4 * 2
