"""A timed case's sampled outputs are copied out after the exclusive hold, not inside it.

On an H100, packing the sample into the reply arena (runner, 0.08 s a timed case) and copying
it out (judge, 0.05 s) took a third of the hold. The runner now keeps each ``time`` request's
sample under the request's ``keep`` name, and a ``samples`` request asks for it once the
judge shares the device again. A batch times several cases before it asks for any sample, so
each case's sample must stay apart from the next one's. The runner's own logic, in-process, on
the CPU backend (tests/test_timing_hold.py checks the lock a real judge holds for each).
"""

from __future__ import annotations

from typing import Any

import pytest

from kgb_core.evaluation import exchange, verdicts
from kgb_core.evaluation.arena import Arenas
from kgb_core.evaluation.launches import LaunchCounter
from kgb_core.evaluation.runner import CandidateFailure, Runner

# A few timed calls: every one of them is in the sample (EVERY_CALL_UP_TO).
FEW_CALLS = {"min_repetitions": 3, "max_repetitions": 3}


@pytest.fixture
def runner(registry, tmp_path) -> Runner:
    """A CPU runner in this process, its kernel an output the size of its input, filled with
    that size: one case's sample cannot pass for another's."""
    import torch

    arenas = Arenas.create(1 << 26)  # the judge's and the runner's alike, in one process
    made = Runner(registry.backend("cpu"), LaunchCounter(), io_dir=str(tmp_path), arenas=arenas)
    made.path = __file__

    def sized(x: Any) -> Any:
        made.counter.note_launch("sized")  # what a wrapped Triton launch notes
        return torch.full_like(x, float(x.numel()))

    made.kernel = sized
    return made


def _time(runner: Runner, slot: str, size: int) -> dict[str, Any]:
    """One timed case as the judge asks for it: its three sets put, then timed by name."""
    import torch

    packed = exchange.pack([[torch.randn(size)] for _ in range(3)])
    runner.handle({"op": "put", "keep": slot + "-sets", "inputs": packed.tree,
                   "bytes": packed.place(runner.arenas.requests)})
    return runner.handle({"op": "time", "keep": slot, "reuse": slot + "-sets", "sample": 2,
                          "sample_seed": 5, "settings": FEW_CALLS})


def _samples(runner: Runner, slot: str) -> tuple[list[Any], dict[str, Any]]:
    """The ``samples`` request for ``slot``, its reply unpacked as the judge does."""
    reply = runner.handle({"op": "samples", "of": slot})
    described = reply["samples"]
    blob = runner.arenas.replies.for_reading(int(described["bytes"]))
    return exchange.unpack(described["tree"], blob, "cpu", sent=[]), reply


def test_samples_asked_for_a_slot_nobody_timed_are_refused(runner):
    with pytest.raises(CandidateFailure) as refused:
        runner.handle({"op": "samples", "of": "timed-7"})
    assert refused.value.verdict == verdicts.RUNTIME_ERROR
    assert "timed-7" in refused.value.message


def test_a_time_reply_carries_no_samples_and_a_batch_gets_each_cases_own(runner):
    import torch

    first, second = _time(runner, "timed-0", 8), _time(runner, "timed-1", 16)
    for reply in (first, second):
        assert "samples" not in reply and "samples" not in reply["phases"], reply
        assert reply["timing"]["repetitions"] == 3
    # Asked for in the other order: each by its own name, the later time request having
    # neither overwritten nor freed the earlier one's.
    for slot, size in (("timed-1", 16), ("timed-0", 8)):
        entries, reply = _samples(runner, slot)
        assert set(reply["phases"]) == {"samples"}
        assert entries and all(output.shape == (size,) and torch.all(output == size)
                               for _, _, _, output, _ in entries), (slot, entries)
    # Taken once: the memory goes with them, and asking again is refused.
    assert runner.timed_samples == {}
    with pytest.raises(CandidateFailure):
        runner.handle({"op": "samples", "of": "timed-0"})
    # The first timed set is still kept for the call after timing.
    assert {"timed-0", "timed-1"} <= set(runner.kept)


def test_a_time_request_without_a_name_is_refused(runner):
    with pytest.raises(CandidateFailure) as refused:
        runner.handle({"op": "time", "sample": 2})
    assert refused.value.verdict == verdicts.RUNTIME_ERROR
