"""The pool's queue (kgb_core/evaluation/job_queue.py): an operator's candidates stay on the
judge that took its first one, which keeps that operator's draws and baselines, while priority
and no worker idling come first."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest

from kgb_core.evaluation import devices, verdicts
from kgb_core.evaluation.devices import DevicePool, EvalJob
from kgb_core.evaluation.evaluator import EvaluationSettings
from kgb_core.evaluation.job_queue import Empty, OperatorQueue, Queued
from kgb_core.evaluation.results import EvalResult


def _queue(*jobs: tuple[str, int]) -> OperatorQueue:
    """Jobs (operator, priority) in the order given."""
    queue = OperatorQueue()
    for sequence, (op, priority) in enumerate(jobs):
        queue.put(Queued(priority, sequence, EvalJob(op=op, source="", sample=sequence), None))
    return queue


def _take(queue: OperatorQueue, worker: str) -> str:
    item = queue.get_nowait(worker)
    return f"{item.job.op}{item.job.sample}"


def test_one_job_an_operator_keeps_the_plain_order():
    queue = _queue(("a", 5), ("b", 5), ("c", 1), ("d", 5))
    assert [_take(queue, worker) for worker in ("w1", "w2", "w1", "w2")] == \
        ["c2", "a0", "b1", "d3"]
    assert queue.claims() == {}
    with pytest.raises(Empty):
        queue.get_nowait("w1")


def test_an_operators_jobs_stay_with_the_worker_that_took_the_first():
    queue = _queue(("a", 5), ("a", 5), ("a", 5), ("b", 5), ("b", 5), ("b", 5))
    assert [_take(queue, worker) for worker in ("w1", "w2", "w2", "w1")] == \
        ["a0", "b3", "b4", "a1"]
    assert queue.claims() == {"a": "w1", "b": "w2"}
    assert _take(queue, "w1") == "a2"
    assert queue.claims() == {"b": "w2"}  # nothing of a waits: its claim is gone


def test_priority_comes_before_a_claim():
    queue = _queue(("a", 5), ("b", 5), ("a", 1), ("b", 5))
    assert _take(queue, "w1") == "a2"  # the best priority, and a is w1's from now on
    assert _take(queue, "w2") == "b1"  # the best priority left: b, not w1's a
    queue.put(Queued(0, 9, EvalJob(op="b", source="", sample=9), None))
    assert _take(queue, "w1") == "b9"  # better than any job w1 may take: it goes to w1


def test_a_worker_with_nothing_else_takes_a_claimed_operators_job_after_a_grace():
    """An operator queued alone is claimed by the first taker; a second worker waits
    STEAL_AFTER_S for another operator's job (a sweep queues the next one soon after), and
    takes the claimed one's only when none came: no worker idles longer."""
    queue = _queue(("a", 5), ("a", 5), ("a", 5))
    assert _take(queue, "w1") == "a0"
    started = time.monotonic()
    assert queue.get("w2", steal_after_s=0.3).job.sample == 1
    assert 0.25 <= time.monotonic() - started < 5
    # Another operator's job put within the grace goes to the waiting worker instead.
    later = threading.Timer(0.1, queue.put_all, ([Queued(5, 7, EvalJob(op="b", source="",
                                                                       sample=7), None)],))
    later.start()
    assert queue.get("w2", steal_after_s=5).job.op == "b"
    later.join()


def test_a_waiting_worker_wakes_for_a_job_put_later():
    queue = OperatorQueue()
    got = []
    waiter = threading.Thread(target=lambda: got.append(queue.get("w1")))
    waiter.start()
    time.sleep(0.1)
    queue.put(Queued(5, 0, None, None))  # a stop sentinel is anyone's
    waiter.join(5)
    assert got and got[0].job is None


class _RecordingEvaluator:
    """Stands in for a judge: records which slot evaluated which candidate."""

    ran: dict[str, set] = defaultdict(set)
    lock = threading.Lock()

    def __init__(self, slot):
        self.slot, self.worker_starts, self.worker_info = slot, 1, {}

    def start(self):
        pass

    def evaluate(self, op, source, method="", sample=0, seeds=None):
        time.sleep(0.02)
        with self.lock:
            self.ran[op].add(self.slot)
        return EvalResult(op=op, backend="cpu", verdict=verdicts.PASS, sample=sample)

    def judge_status(self):
        return {}

    def kill_worker(self):
        pass

    def close(self):
        pass


def test_a_pools_samples_of_one_operator_run_on_one_judge(monkeypatch, registry):
    """Three operators, four candidates each, queued an operator at a time as a sweep does,
    two workers: the first two operators each run on one judge (a plain queue handed their
    candidates to both); the third may be split at the end, so that neither worker idles
    long while its jobs wait."""
    _RecordingEvaluator.ran.clear()
    monkeypatch.setattr(devices.Evaluator, "for_backend",
                        lambda backend, settings, device=None, slot=None:
                        _RecordingEvaluator(slot))
    untimed = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    pool = DevicePool(registry.backend("cpu"), untimed, [0], workers_per_device=2)
    # All queued before the workers start, so that no loaded machine's scheduling decides it.
    futures = [future for op in ("a", "b", "c")
               for future in pool.submit_all([EvalJob(op=op, source="", sample=sample)
                                              for sample in range(4)])]
    pool.start()
    try:
        assert all(f.result(timeout=30).passed for f in futures)
    finally:
        pool.close()
    ran = _RecordingEvaluator.ran
    assert len(ran["a"]) == 1 and len(ran["b"]) == 1, dict(ran)
    assert ran["a"] != ran["b"], "the two workers took one operator each"
