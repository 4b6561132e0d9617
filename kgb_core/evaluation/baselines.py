"""Baseline timings a judge measured, kept for the same operator's next candidates.

The baseline (PyTorch's own implementation, timed by the judge on its own copies of the
inputs) never changes between candidates of one operator: its inputs come from fixed seeds
(``checker.TIMING_SEEDS``), and nothing a candidate does reaches the judge. Timing it again
for every sample of a sweep, every method and every agent turn spent device time on the same
number. A judge keeps each (operator, case, dtype, timer, timing settings) baseline it measured
for as long as it lives (64 candidates at most; a new sweep starts new judges, so a new sweep
measures afresh), and a result says when each baseline was measured and whether it was reused.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from typing import Any, Callable

from kgb_core.timing import Timing

# Enough for every timed case of every operator several times over; the oldest go first.
MAX_ENTRIES = 4096


@dataclass(frozen=True)
class Baseline:
    timing: Timing
    measured_at: str  # ISO 8601, UTC, to the second


class BaselineCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: dict[tuple[str, ...], Baseline] = {}
        self.max_entries = max_entries
        self.hits = 0

    @staticmethod
    def key(op: str, case: str, dtype: str, timer_label: str,
            settings: dict[str, Any]) -> tuple[str, ...]:
        return (op, case, dtype, timer_label, json.dumps(settings, sort_keys=True, default=str))

    def get_or_measure(self, key: tuple[str, ...],
                       measure: Callable[[], Timing]) -> tuple[Baseline, bool]:
        """The kept baseline and True, or a new measurement (kept) and False."""
        kept = self._entries.get(key)
        if kept is not None:
            self.hits += 1
            return kept, True
        baseline = Baseline(measure(), _dt.datetime.now(_dt.timezone.utc)
                            .isoformat(timespec="seconds"))
        if len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = baseline
        return baseline, False
