"""Host-side input draws: one torch CPU generator against kgb's chunked draws on threads.

``python benchmarks/input_draws.py [--sizes 4194304,67108864] [--runs 3]``

Prints, per kind of draw and size, the best of ``--runs`` wall times of the serial
``torch.randn``/``rand``/``randint`` with one generator (what every input was drawn with before
``kgb_core/draws.py``) and of ``kgb_core.draws``, in millions of values per second, with the
number of threads torch uses here (``torch.get_num_threads()``, the pool's size).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import torch

from kgb_core import draws
from kgb_core.report import render_table


def _best_s(draw: Callable[[torch.Generator], torch.Tensor], runs: int) -> float:
    best = float("inf")
    for run in range(runs):
        generator = torch.Generator().manual_seed(run)
        started = time.perf_counter()
        draw(generator)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4194304,67108864",
                        help="comma-separated element counts")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        kinds = {
            "normal": (lambda g: torch.randn((size,), generator=g),
                       lambda g: draws.normal((size,), g)),
            "uniform": (lambda g: torch.rand((size,), generator=g),
                        lambda g: draws.unit_uniform((size,), g)),
            "integers": (lambda g: torch.randint(0, 1000, (size,), generator=g),
                         lambda g: draws.integers((size,), 0, 1000, g)),
        }
        for kind, (serial, chunked) in kinds.items():
            serial_s, chunked_s = _best_s(serial, args.runs), _best_s(chunked, args.runs)
            rows.append([kind, size, f"{serial_s * 1e3:.1f}", f"{size / serial_s / 1e6:.0f}",
                         f"{chunked_s * 1e3:.1f}", f"{size / chunked_s / 1e6:.0f}",
                         f"{serial_s / chunked_s:.1f}"])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, chunks of "
          f"{draws.CHUNK_ELEMENTS} values, best of {args.runs} runs")
    print(render_table(["draw", "values", "one generator ms", "M values/s", "kgb chunked ms",
                        "M values/s", "speedup"], rows))


if __name__ == "__main__":
    main()
