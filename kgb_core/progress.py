"""Progress of a long sweep on stderr: done, passed, failed, elapsed, ETA.

On a terminal one line is rewritten in place; in a log (CI, a pipe) every finished item is
its own line, so the log shows what happened and when.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, label: str = "") -> None:
        self.total = total
        self.done = 0
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.stream = stream or sys.stderr
        self.label = label
        self._started = time.monotonic()
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def advance(self, item: str, verdict: str, passed: bool) -> None:
        from kgb_core.evaluation.verdicts import SKIPPED

        self.done += 1
        skipped = not passed and verdict in SKIPPED  # neither passed nor failed
        self.passed += passed
        self.skipped += skipped
        self.failed += not passed and not skipped
        elapsed = time.monotonic() - self._started
        remaining = self.total - self.done
        eta = elapsed / self.done * remaining if self.done else 0.0
        line = (f"{self.label}[{self.done}/{self.total}] {item}: {verdict}  "
                f"(passed {self.passed}, failed {self.failed}"
                + (f", skipped {self.skipped}" if self.skipped else "")
                + f", elapsed {_clock(elapsed)}, "
                f"ETA {_clock(eta)})")
        if self._tty:
            self.stream.write("\r\x1b[2K" + line)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, message: str) -> None:
        if self._tty:
            self.stream.write("\r\x1b[2K")
        self.stream.write(message + "\n")
        self.stream.flush()
