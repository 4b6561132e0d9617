"""A job's input draws made ahead, on a thread of their own, while its steps run and wait.

A judge draws every input on the host (``kgb_core/draws.py``); ``Evaluation._draw_ahead`` made
each draw's host work before its step, holding no device lock, and kept the large values in the
draw cache (``kgb_core/draw_cache.py``), where the step's own draw found them. That took the
drawing out of the steps every judge about to time waits for, but not out of the job: on the
H100 at 7e429d5 the draws made ahead were 2.94 s of an operator's 17.5 (eight judges on one
device), done while nothing else of that job ran.

Which draws a job makes is known once its runnable cases are: each case's trials, its timed
sets, its call after timing, in that order. So a ``DrawPlan`` draws them in that order on one
background thread, at most ``LOOKAHEAD`` past the last one the job asked for (the cache is
bounded; a plan far ahead would push out what the job needs next), while the job's own thread
waits on its runner, on the device's lock or at the gate. When the job reaches a draw it waits
for the plan to have made it (``wait_for``), and draws it itself if the plan never meant to.
The values are the same either way: each draw's generator is seeded from its own seed, so the
order and the thread it is made on change nothing.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Hashable, Sequence

# How many draws the plan may make past the last one the job asked for: one to overlap the
# step running now, one more so that a short step does not find the plan still drawing.
LOOKAHEAD = 2


class DrawPlan:
    """``draw(key)`` for each of ``keys`` in order on a daemon thread, ``LOOKAHEAD`` ahead of
    the job. ``drawn_s``: the thread's seconds of drawing; ``waited_s``: the job's seconds
    waiting for a draw the thread was making."""

    def __init__(self, keys: Sequence[Hashable], draw: Callable[[Hashable], None],
                 lookahead: int = LOOKAHEAD) -> None:
        self._keys = list(keys)
        # Where each key comes in the plan: a key may come twice (a timed set drawn with a
        # trial's seed), and each time the job asks for it is the next of them.
        self._positions: dict[Hashable, list[int]] = {}
        for index, key in enumerate(self._keys):
            self._positions.setdefault(key, []).append(index)
        self._draw = draw
        self._lookahead = lookahead
        self._condition = threading.Condition()
        self._asked = -1  # the index of the last key the job asked for
        self._done = -1  # the index of the last key the thread finished
        self._stopped = False
        self.drawn_s = 0.0
        self.waited_s = 0.0
        self._thread = threading.Thread(target=self._run, name="kgb-draw-plan", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for index, key in enumerate(self._keys):
                with self._condition:
                    while not self._stopped and index > self._asked + self._lookahead:
                        self._condition.wait()
                    if self._stopped:
                        return
                began = time.perf_counter()
                try:
                    self._draw(key)
                except Exception:  # noqa: BLE001 - the job's own draw meets the error, if real
                    pass
                with self._condition:
                    self.drawn_s += time.perf_counter() - began
                    self._done = index
                    self._condition.notify_all()
        finally:  # done, stopped, or ended by what no draw should raise: the job draws the rest
            with self._condition:
                self._stopped = True
                self._condition.notify_all()

    def wait_for(self, key: Hashable) -> bool:
        """Wait until the plan has drawn ``key``; False where it does not plan to (the key is
        not in the plan after the last one asked for: the caller draws it)."""
        with self._condition:
            index = next((i for i in self._positions.get(key, ()) if i > self._asked), None)
            if index is None:
                return False
            self._asked = index
            self._condition.notify_all()
            began = time.perf_counter()
            while self._done < index and not self._stopped:
                self._condition.wait()
            self.waited_s += time.perf_counter() - began
            return self._done >= index

    def stop(self) -> None:
        """No draw after the one under way (the job ended early: a verdict, a deadline). The
        thread is not waited for: a draw under way finishes into the cache, which it shares
        safely with the next job."""
        with self._condition:
            self._stopped = True
            self._condition.notify_all()
