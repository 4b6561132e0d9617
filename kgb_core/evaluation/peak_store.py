"""Each operator's job memory peak, kept between sweeps on the same machine.

A shared device admits jobs by the device memory each needs (``job_memory.JobMemory``). Within
a sweep an operator's need is its last job's observed peak once one finished; before that it is
a model read from its cases' shapes, which over 60 operators on an H100 read 2.3 to 12 times
the timed batch where the peaks were (``benchmarks/results/h100-full-sweep-d0799ab-rows.txt``):
a median operator's model came to 2.5 times its real peak, so eight judges that would have fit
on the card waited at the gate for memory for 48 % of their time. A sweep sees each operator
once, so its own observations never help it. Kept here, in the machine's baselines file (the
same machine, the same reason: a later sweep of the machine reuses what an earlier one
measured), they do: every sweep after the first admits its jobs by their real peaks.

A stored peak is only ever a scheduling estimate, like the runner's report it came from (a
candidate can make that up): too high, the operator's next jobs wait for memory they do not
need; too low, a job beside them may run out and run again alone. Neither changes a verdict,
and neither lasts: every finished job of the operator replaces the stored peak with its own.
The file is the stored baselines', which no runner can read or write (masked in its sandbox).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from kgb_core.evaluation.baselines import now


class PeakStore:
    """Peaks of ``scope``'s jobs (a backend's name: an AMD card's peaks are not an NVIDIA
    card's), keyed by operator, in the SQLite file at ``path``. Read once, at first use; each
    new peak written at once (another sweep on the machine may read it next)."""

    def __init__(self, path: str | Path, scope: str) -> None:
        self.path = Path(path)
        self.scope = scope
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One connection for the pool's threads, each use under self._lock.
            self._connection = sqlite3.connect(self.path, timeout=60.0, isolation_level=None,
                                               check_same_thread=False)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS job_peaks (scope TEXT NOT NULL, op TEXT NOT NULL, "
                "bytes INTEGER NOT NULL, measured_at TEXT NOT NULL, PRIMARY KEY (scope, op))")
        return self._connection

    def load(self) -> dict[str, int]:
        """Every stored peak of this scope, by operator."""
        with self._lock:
            rows = self._db().execute("SELECT op, bytes FROM job_peaks WHERE scope = ?",
                                      (self.scope,)).fetchall()
        return {str(op): int(peak) for op, peak in rows if int(peak) > 0}

    def put(self, op: str, peak: int) -> None:
        with self._lock:
            self._db().execute("INSERT OR REPLACE INTO job_peaks VALUES (?, ?, ?, ?)",
                               (self.scope, op, int(peak), now()))

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


__all__ = ["PeakStore"]
