"""What one checked call's tensors cost to cross the judge/runner boundary, by size.

``python benchmarks/exchange_cost.py [--device cuda] [--mb 4,64,512]``

For an elementwise operator's call (one input, one output of the same size) it times the
exchange as kgb does it, in one process and without a kernel: the judge packs the input and
writes the request's file, the runner reads and rebuilds it on the device; the runner packs
its reply (output and inputs as the call left them) and writes it, the judge reads and
rebuilds it. Two replies: the inputs' bytes sent back (as before), and the unchanged input
named instead (``{"input": k}``, kgb_core/evaluation/exchange.py), which also costs the
runner a comparison after the call against the bytes the input came as (the request file's,
on the host; a copy made on arrival, on a device). The third column adds what kgb does
now: host memory reused from call to call (``exchange.HostBuffer``) for the copies off the
device and the files' bytes, where each call took fresh memory before. Files go where the
runners' folders go (``runners.runners_root``: the system's temporary folder unless
KGB_RUNNER_DIR says otherwise); ``--dir`` names others to compare, one table row each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kgb_core.evaluation import exchange  # noqa: E402
from kgb_core.evaluation.runners import runners_root  # noqa: E402
from kgb_core.report import render_table  # noqa: E402


def one_call(x: torch.Tensor, folder: str, name_unchanged: bool,
             buffers: list[exchange.HostBuffer | None]) -> float:
    """Seconds for one request and its reply, synchronised at the end. ``buffers``: the
    judge's and the runner's (staging, read) host buffers, or four None for fresh memory."""
    device = x.device
    judge_staging, judge_read, runner_staging, runner_read = buffers
    started = time.perf_counter()
    request = exchange.pack([x], staging=judge_staging)
    request.write(os.path.join(folder, "in.bin"))
    received: list = []
    sent = exchange.read_file(os.path.join(folder, "in.bin"), 1 << 40, buffer=runner_read)
    handed = exchange.unpack(request.tree, sent, device, received=received)
    os.unlink(os.path.join(folder, "in.bin"))
    order = sorted(received, key=lambda r: r[0])
    # as the runner keeps them: the file's bytes on the host, a copy on a device
    copies = [data if s.device.type == "cpu" else exchange.storage_bytes(s).clone()
              for _, s, data in order] if name_unchanged else []
    order = [s for _, s, _ in order]
    output = -handed[0]  # stands in for the kernel
    unchanged = {exchange.storage_key(s): k for k, (s, c) in enumerate(zip(order, copies))
                 if exchange.storage_bytes(s).equal(c)}
    reply = exchange.pack([output, handed], opaque=True, unchanged=unchanged,
                          staging=runner_staging)
    reply.write(os.path.join(folder, "out.bin"))
    blob = exchange.read_file(os.path.join(folder, "out.bin"), 1 << 40, buffer=judge_read)
    back = exchange.unpack(reply.tree, blob, device, sent=request.sources)
    os.unlink(os.path.join(folder, "out.bin"))
    if device.type == "cuda":
        torch.cuda.synchronize()
    assert torch.equal(back[1][0], x)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mb", default="4,64,512")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default="",
                        help="comma-separated parent folders of the files (default: where "
                             "kgb puts the runners' folders)")
    args = parser.parse_args()
    parents = [d for d in args.dir.split(",") if d] or [runners_root() or tempfile.gettempdir()]
    rows = []
    for parent in parents:
        with tempfile.TemporaryDirectory(prefix="kgb-exchange-", dir=parent) as folder:
            for mb in [int(m) for m in args.mb.split(",")]:
                x = torch.randn(mb * (1 << 20) // 4, device=args.device)
                measured = {}
                for variant, named, reused in (("sent back", False, False),
                                               ("named", True, False), ("reused", True, True)):
                    buffers = [exchange.HostBuffer() if reused else None for _ in range(4)]
                    one_call(x, folder, named, buffers)  # warm: allocator, page cache
                    measured[variant] = statistics.median(one_call(x, folder, named, buffers)
                                                          for _ in range(args.repeat))
                rows.append([parent, str(mb)] + [f"{1e3 * measured[v]:.1f}" for v in
                                                 ("sent back", "named", "reused")])
                print("measured | " + " | ".join(rows[-1]), flush=True)
    print(f"device {args.device}, median of {args.repeat}")
    print(render_table(["files in", "input MB (fp32)", "ms, inputs sent back",
                        "ms, unchanged named", "ms, named + reused host buffers"], rows))


if __name__ == "__main__":
    main()
