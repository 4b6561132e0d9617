"""The evaluation pool's queue: an operator's candidates go to the judge that has its inputs.

A judge keeps what it drew and measured for an operator for that operator's next candidates:
its large input draws (``kgb_core/draw_cache.py``) and its baselines (``baselines.py``). A
multi-sample run submits an operator's candidates together (``--samples 5``: five jobs in a
row), and a plain priority queue handed them to whichever workers were free, so each judge drew
and timed the same operator again (on the 2-core CPU, four workers reused few baselines and ran
51 candidates a minute against one worker's 50; ``benchmarks/RESULTS.md``, thirteenth session).

So the first worker to take an operator's job *claims* the operator while more of its jobs
wait, and the other workers take other operators' jobs first. Priority still comes first: a
job of a better priority than any a worker may take goes to it all the same. A worker with
nothing else left takes a claimed operator's job, after ``STEAL_AFTER_S`` with no other job
queued: an operator's candidates are queued together (``put_all``), and a sweep queues the next
operator's soon after, so a worker free at that moment waits that long rather than split the
operator. With one job an operator (a plain sweep) nothing is ever claimed and the order is
the plain queue's: best priority first, first come first within one.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future

    from kgb_core.evaluation.devices import EvalJob
    from kgb_core.evaluation.results import EvalResult


# How long a worker with only claimed operators' jobs to take waits for another job first.
STEAL_AFTER_S = 0.5


class Empty(Exception):
    """``get_nowait`` found nothing queued."""


@dataclass(order=True)
class Queued:
    priority: int
    sequence: int
    job: "EvalJob | None" = field(compare=False)  # None: a worker's stop sentinel
    future: "Future[EvalResult] | None" = field(compare=False)


class OperatorQueue:
    """Jobs by priority, an operator's kept on the worker that claimed it (module docstring)."""

    def __init__(self) -> None:
        self._items: list[Queued] = []  # a heap
        self._condition = threading.Condition()
        self._waiting: Counter[str] = Counter()  # queued jobs per operator
        self._claims: dict[str, Any] = {}  # operator -> the worker that claimed it

    def put(self, item: Queued) -> None:
        self.put_all([item])

    def put_all(self, items: list[Queued]) -> None:
        """Queue items at once: no worker takes one before the others are in."""
        with self._condition:
            for item in items:
                heapq.heappush(self._items, item)
                if item.job is not None:
                    self._waiting[item.job.op] += 1
            self._condition.notify_all()

    def get(self, worker: Any, steal_after_s: float = STEAL_AFTER_S) -> Queued:
        """The next job for ``worker`` (any hashable name), waiting until there is one; a
        claimed operator's job of another worker only after ``steal_after_s`` with no other."""
        grace_ends: float | None = None
        with self._condition:
            while True:
                if not self._items:
                    grace_ends = None
                    self._condition.wait()
                    continue
                if any(self._mine(item, worker) for item in self._items):
                    return self._take(worker)
                now = time.monotonic()
                grace_ends = grace_ends or now + steal_after_s
                if now >= grace_ends:
                    return self._take(worker)
                self._condition.wait(grace_ends - now)  # a job put meanwhile may be this one's

    def get_nowait(self, worker: Any = None) -> Queued:
        with self._condition:
            if not self._items:
                raise Empty()
            return self._take(worker)

    def claims(self) -> dict[str, Any]:
        with self._condition:
            return dict(self._claims)

    def _take(self, worker: Any) -> Queued:
        best = self._items[0]
        chosen = best
        if not self._mine(best, worker):
            # The earliest job of the best priority that is this worker's or no one's.
            mine = [item for item in self._items
                    if item.priority == best.priority and self._mine(item, worker)]
            if mine:
                chosen = min(mine)
        if chosen is best:
            heapq.heappop(self._items)
        else:
            self._items.remove(chosen)
            heapq.heapify(self._items)
        if chosen.job is not None:
            op = chosen.job.op
            self._waiting[op] -= 1
            if self._waiting[op] <= 0:
                del self._waiting[op]
                self._claims.pop(op, None)
            else:
                self._claims.setdefault(op, worker)
        return chosen

    def _mine(self, item: Queued, worker: Any) -> bool:
        return item.job is None or self._claims.get(item.job.op, worker) == worker
