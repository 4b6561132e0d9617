"""What one checked call's tensors cost to cross the judge/runner boundary, by size.

``python benchmarks/exchange_cost.py [--device cuda] [--mb 4,64,512]``

For an elementwise operator's call (one input, one output of the same size) it times the
exchange in one process and without a kernel: the judge packs the input and hands it over, the
runner rebuilds it on the device; the runner packs its reply (the output, and the unchanged
input named, ``{"input": k}``), the judge rebuilds it. Three ways of handing over:

- *files*: a new file per request and per reply, read into fresh memory (kgb until the arenas);
- *arenas*: the runner's two shared-memory arenas (``kgb_core/evaluation/arena.py``), what kgb
  does now: the bytes are copied off the device straight into shared memory and onto the
  device straight out of it;
- *pinned arenas* (``--device cuda`` only): the same, with the arenas' memory page-locked
  (``cudaHostRegister``), which kgb does not do; the registration's own cost is printed apart,
  since a fresh runner would pay it for its mapping.

Files go where the runners' folders go (``runners.runners_root``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kgb_core.evaluation import exchange  # noqa: E402
from kgb_core.evaluation.arena import Arenas  # noqa: E402
from kgb_core.evaluation.runners import runners_root  # noqa: E402
from kgb_core.report import render_table  # noqa: E402


def _through_files(folder: str) -> Callable[[exchange.Packed, str], torch.Tensor]:
    def hand_over(packed: exchange.Packed, name: str) -> torch.Tensor:
        path = os.path.join(folder, name)
        packed.write(path)
        try:
            return exchange.read_file(path, 1 << 40)
        finally:
            os.unlink(path)
    return hand_over


def _through_arenas(arenas: Arenas) -> Callable[[exchange.Packed, str], torch.Tensor]:
    def hand_over(packed: exchange.Packed, name: str) -> torch.Tensor:
        arena = arenas.requests if name == "in" else arenas.replies
        return arena.for_reading(packed.place(arena))
    return hand_over


def one_call(x: torch.Tensor, hand_over: Callable[[exchange.Packed, str], torch.Tensor]) -> float:
    """Seconds for one request and its reply, synchronised at the end."""
    device = x.device
    started = time.perf_counter()
    request = exchange.pack([x])
    received: list[Any] = []
    handed = exchange.unpack(request.tree, hand_over(request, "in"), device, received=received)
    order = sorted(received, key=lambda r: r[0])
    # as the runner keeps them: the bytes as they came on the host, a copy on a device
    copies = [data if s.device.type == "cpu" else exchange.storage_bytes(s).clone()
              for _, s, data in order]
    output = -handed[0]  # stands in for the kernel
    unchanged = {exchange.storage_key(s): k for k, ((_, s, _), c) in enumerate(zip(order, copies))
                 if exchange.storage_bytes(s).equal(c)}
    reply = exchange.pack([output, handed], opaque=True, unchanged=unchanged)
    back = exchange.unpack(reply.tree, hand_over(reply, "out"), device, sent=request.sources)
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    assert torch.equal(back[1][0], x) and torch.equal(back[0], output)
    return elapsed


def _pin(arenas: Arenas, nbytes: int) -> float:
    """Page-lock both arenas' first ``nbytes`` (mapped first); seconds it took."""
    cudart = torch.cuda.cudart()
    started = time.perf_counter()
    for arena in (arenas.requests, arenas.replies):
        region = arena.for_writing(nbytes)
        code = cudart.cudaHostRegister(region.data_ptr(), nbytes, 0)
        if int(code) != 0:
            raise RuntimeError(f"cudaHostRegister failed: {code}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mb", default="4,64,512")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    parent = runners_root() or tempfile.gettempdir()
    pinned = args.device.startswith("cuda")
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgb-exchange-", dir=parent) as folder:
        for mb in [int(m) for m in args.mb.split(",")]:
            x = torch.randn(mb * (1 << 20) // 4, device=args.device)
            ways = {"files": _through_files(folder),
                    "arenas": _through_arenas(Arenas.create(1 << 40))}
            pin_s = None
            if pinned:
                locked = Arenas.create(1 << 40)
                pin_s = _pin(locked, 2 * x.numel() * 4)
                ways["pinned arenas"] = _through_arenas(locked)
            row = [str(mb)]
            for way in ways.values():
                one_call(x, way)  # warm: the allocator, the arenas' first mapping
                median = statistics.median(one_call(x, way) for _ in range(args.repeat))
                row.append(f"{1e3 * median:.1f}")
            if pinned:
                row.append(f"{1e3 * pin_s:.1f}")
            rows.append(row)
            print("measured | " + " | ".join(row), flush=True)
    print(f"device {args.device}, median of {args.repeat}; files in {parent}")
    pinned_columns = ["ms, pinned arenas", "ms to pin them (once a runner)"] if pinned else []
    print(render_table(["input MB (fp32)", "ms, files", "ms, arenas"] + pinned_columns, rows))


if __name__ == "__main__":
    main()
