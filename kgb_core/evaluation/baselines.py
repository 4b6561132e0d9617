"""Baseline timings measured once, kept for every later candidate on the same machine.

The baseline (PyTorch's own implementation, timed by the judge on its own copies of the
inputs) never changes between candidates of one operator: its inputs come from fixed seeds
(``checker.TIMING_SEEDS``), and nothing a candidate does reaches the judge. Timing it again
for every sample of a sweep, every method and every agent turn spent device time on the same
number. A judge keeps each baseline it measured, keyed by operator, case, dtype, timer, timing
settings, backend, device name and torch and Triton versions; with a ``BaselineStore`` (a
SQLite file the harness names, on a GPU ``~/.cache/kgb/baselines.sqlite``) later sweeps on the
same machine reuse it too. Any change to a key part measures afresh; ``--retime-baselines``
re-measures every baseline once in the sweep that asks. A result says when each baseline was
measured and whether it was reused.

A stored baseline could drift (a driver update that keeps the versions, a warmer machine):
each sweep re-times a random fraction of the stored baselines it reuses (``recheck``) and
keeps the new median beside the stored one, so the report can show the spread; the speedup
still uses the stored time, so that one sweep's numbers stay comparable with the last's.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kgb_core.timing import Timing

# Enough for every timed case of every operator several times over; the oldest go first.
MAX_ENTRIES = 4096
# A stored baseline whose call takes this long or more is never drawn for a recheck
# (``BaselineCache._draw_recheck``): a second, ten times the timer's repetition budget.
RECHECK_SLOWER_MS = 1000.0
_RANDOM = random.SystemRandom()


def now() -> str:
    """ISO 8601, UTC, to the second: how a baseline's measuring time is kept."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Baseline:
    timing: Timing
    measured_at: str  # now()'s form
    # Where a stored baseline was timed again in this sweep (recheck): the new median.
    recheck_ms: float | None = None


class BaselineStore:
    """Baselines kept on disk between sweeps; several judges (processes) share one file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # Opened at first use: a judge that decides not to keep stored baselines (unsandboxed)
        # leaves no file behind.
        self._opened: sqlite3.Connection | None = None

    def open(self) -> None:
        """Make the file now (a sandboxed judge masks it from the runners, which needs it to
        exist when their sandbox is set up)."""
        self._db  # noqa: B018 - opened for its side effect

    @property
    def _db(self) -> sqlite3.Connection:
        if self._opened is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._opened = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._opened.execute("PRAGMA journal_mode=WAL")
            self._opened.execute("CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, "
                                 "timing TEXT NOT NULL, measured_at TEXT NOT NULL)")
        return self._opened

    def get(self, key: str) -> Baseline | None:
        row = self._db.execute("SELECT timing, measured_at FROM baselines WHERE key = ?",
                               (key,)).fetchone()
        if row is None:
            return None
        try:
            return Baseline(Timing(**json.loads(row[0])), row[1])
        except (TypeError, ValueError):  # written by another kgb: measured again
            return None

    def put(self, key: str, baseline: Baseline) -> None:
        self._db.execute("INSERT OR REPLACE INTO baselines VALUES (?, ?, ?)",
                         (key, json.dumps(baseline.timing.to_dict()), baseline.measured_at))

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
            self._opened = None


class BaselineCache:
    """A judge's baselines: in memory for its life, and in ``store`` where there is one.

    ``environment``: what else a timing depends on (backend, device name, torch and Triton
    versions), part of every key; a callable gives it when first needed (once the judge's device
    is set up). ``retime_before``: a stored baseline measured before this
    moment (``now()``'s form) is measured again, once. ``recheck``: the fraction of reused
    stored baselines timed again to watch for drift."""

    def __init__(self, max_entries: int = MAX_ENTRIES, store: BaselineStore | None = None,
                 environment: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                 retime_before: str = "",
                 recheck: float = 0.0) -> None:
        self._entries: dict[tuple[str, ...], Baseline] = {}
        self.max_entries = max_entries
        self.store = store
        self._environment = environment
        self.retime_before = retime_before
        self.recheck = recheck
        self.hits = 0
        # Recheck draws made ahead by ``would_measure``, each used by the key's next
        # ``get_or_measure``: the two must agree on whether the baseline is measured.
        self._rechecks: dict[tuple[str, ...], bool] = {}

    @staticmethod
    def key(op: str, case: str, dtype: str, timer_label: str, settings: dict[str, Any],
            params: dict[str, Any] | None = None) -> tuple[str, ...]:
        """``params``: the case's parameters, so that a case whose shapes changed under the
        same name (a newer source) is measured afresh."""
        return (op, case, dtype, timer_label, json.dumps(settings, sort_keys=True, default=str),
                json.dumps(params or {}, sort_keys=True, default=str))

    def get_or_measure(self, key: tuple[str, ...],
                       measure: Callable[[], Timing]) -> tuple[Baseline, bool]:
        """The kept baseline and True, or a new measurement (kept) and False."""
        drawn = self._rechecks.pop(key, None)  # would_measure's recheck draw, if it made one
        kept = self._entries.get(key)
        if kept is not None:
            self.hits += 1
            return kept, True
        stored_key = self._stored_key(key)
        stored = self._fresh_stored(stored_key)
        if stored is not None:
            self._keep(key, stored)
            self.hits += 1
            recheck = self._draw_recheck(stored) if drawn is None else drawn
            if recheck:
                return Baseline(stored.timing, stored.measured_at, measure().median_ms), True
            return stored, True
        baseline = Baseline(measure(), now())
        if self.store is not None:
            self.store.put(stored_key, baseline)
        self._keep(key, baseline)
        return baseline, False

    def would_measure(self, key: tuple[str, ...]) -> bool:
        """Whether ``get_or_measure(key, ...)`` would call its measure function now: nothing
        kept, or a stored baseline drawn for a recheck. The judge asks before it holds the
        device alone, to make the baseline's untimed first call beside other judges' checks
        (checker.py); the recheck is drawn here, once, and that draw is what the key's next
        ``get_or_measure`` does. Another judge may store the key in between: then nothing is
        measured after all, and the early call cost one baseline call, not a timing."""
        if key in self._entries:
            return False
        stored = self._fresh_stored(self._stored_key(key))
        if stored is None:
            return True
        if key not in self._rechecks:
            self._rechecks[key] = self._draw_recheck(stored)
        return self._rechecks[key]

    def _stored_key(self, key: tuple[str, ...]) -> str:
        """The store's key: the cache's, with the environment every stored timing depends on."""
        return json.dumps([*key, self.environment()])

    def _fresh_stored(self, stored_key: str) -> Baseline | None:
        """The stored baseline, unless there is none or ``retime_before`` asks it re-measured."""
        stored = self.store.get(stored_key) if self.store is not None else None
        if stored is not None and stored.measured_at >= self.retime_before:
            return stored
        return None

    def _draw_recheck(self, stored: Baseline) -> bool:
        """Whether a reused stored baseline is timed again this time (``recheck``). Never one
        whose call takes ``RECHECK_SLOWER_MS`` or more: its re-timing holds the device alone
        for seconds, every other judge on it waiting, for one or two samples that say little
        of drift (vllm.convert_vertical_slash_indexes's baseline, a Python loop, 20 s a call
        on the H100)."""
        if stored.timing.median_ms >= RECHECK_SLOWER_MS:
            return False
        return self.recheck > 0 and _RANDOM.random() < self.recheck

    def environment(self) -> str:
        if callable(self._environment):
            self._environment = self._environment()
        return json.dumps(self._environment or {}, sort_keys=True, default=str)

    def _keep(self, key: tuple[str, ...], baseline: Baseline) -> None:
        if len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = baseline
