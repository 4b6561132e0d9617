"""What the runner's recorders add to each aten op a candidate's call makes, on this host.

A timed call runs under the same recorders as a checked one (``recorder.Recording``: torch's
profiler, a dispatch mode and a function mode), so each aten op it makes pays for them on the
host. ``python benchmarks/recorder_op_cost.py`` times ``zero_`` and ``empty_like`` on a small
CPU tensor, best of three runs, bare, under the recorders with and without the profiler, and
under the recorders with the harness's own ``suspended()`` inside (how the runner's work
between timed calls runs), and prints microseconds per op.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from typing import Callable, ContextManager

import torch

from kgb_core.evaluation.launches import LaunchCounter
from kgb_core.evaluation.recorder import Recording, suspended


def per_op_us(wrap: Callable[[], ContextManager], calls: int) -> float:
    """The best of three runs of ``calls`` pairs of ops under ``wrap()``, per op."""
    x = torch.zeros(16)
    best = float("inf")
    for _ in range(3):
        with wrap():
            began = time.perf_counter()
            for _ in range(calls):
                x.zero_()
                torch.empty_like(x)
            best = min(best, time.perf_counter() - began)
    return 1e6 * best / (2 * calls)


@contextlib.contextmanager
def recorded_then_suspended(counter: LaunchCounter):
    with Recording(counter, profiled=True), suspended():
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    counter = LaunchCounter()
    rows = [("bare", contextlib.nullcontext),
            ("recorders and profiler (a timed call)", lambda: Recording(counter, profiled=True)),
            ("recorders, no profiler", lambda: Recording(counter, profiled=False)),
            ("recorders, suspended inside (harness work)",
             lambda: recorded_then_suspended(counter))]
    print(f"{'under':<44} {'us per op':>9}")
    for name, wrap in rows:
        print(f"{name:<44} {per_op_us(wrap, args.calls):>9.1f}", flush=True)


if __name__ == "__main__":
    main()
