"""Wall time per phase, by wrapping named functions for the length of a ``with`` block.

Shared by the benchmarks that say where an evaluation's time goes (``sweep_throughput.py
--profile`` on the judge's side, ``runner_call_cost.py`` inside a runner): cProfile says which
functions are slow, this says which step of the pipeline, in the pipeline's own words.
"""

from __future__ import annotations

import time
from typing import Any, Callable


class PhaseClock:
    """``watch(owner, name, phase)`` before entering; every call of ``owner.name`` while inside
    adds its wall time to ``phase`` (a string, or a function of the call's arguments)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self._watched: list[tuple[Any, str, Callable[[tuple], str]]] = []
        self._originals: list[tuple[Any, str, Any]] = []

    def watch(self, owner: Any, name: str, phase: str | Callable[[tuple], str]) -> "PhaseClock":
        self._watched.append((owner, name, phase if callable(phase) else (lambda _a: phase)))
        return self

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds
        self.counts[phase] = self.counts.get(phase, 0) + 1

    def __enter__(self) -> "PhaseClock":
        for owner, name, phase_of in self._watched:
            original = getattr(owner, name)
            self._originals.append((owner, name, original))
            setattr(owner, name, self._timed(original, phase_of))
        return self

    def _timed(self, original: Callable[..., Any], phase_of: Callable[[tuple], str]):  # noqa: ANN202
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                clock.add(phase_of(args), time.perf_counter() - started)

        return timed

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()

    def rows(self, per: int, *, wall: float | None = None,
             nested: tuple[str, ...] = ()) -> list[list[str]]:
        """One row per phase, slowest first, with seconds per ``per`` (candidates, calls); with
        ``wall``, a last row for the rest (wall minus every phase not in ``nested``, the phases
        timed inside another)."""
        table = [[phase, str(self.counts[phase]), f"{seconds:.2f}", f"{seconds / per:.4f}"]
                 for phase, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1])]
        if wall is not None:
            rest = wall - sum(v for k, v in self.seconds.items() if k not in nested)
            table.append(["the rest", "-", f"{rest:.2f}", f"{rest / per:.4f}"])
        return table
