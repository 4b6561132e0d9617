"""What one checked call's tensors cost to cross the judge/runner boundary, by size.

``python benchmarks/exchange_cost.py [--device cuda] [--mb 4,64,512]``

For an elementwise operator's call (one input, one output of the same size) it times the
exchange as kgb does it, in one process and without a kernel: the judge packs the input and
writes the request's file, the runner reads and rebuilds it on the device; the runner packs
its reply (output and inputs as the call left them) and writes it, the judge reads and
rebuilds it. Two replies: the inputs' bytes sent back (as before), and the unchanged input
named instead (``{"input": k}``, kgb_core/evaluation/exchange.py), which also costs the
runner a comparison after the call against the bytes the input came as (the request file's,
on the host; a copy made on arrival, on a device). Files go where the
runners' folders go (``runners.runners_root``: shared memory where it has room, else the
system's temporary folder); ``--dir`` names others to compare, one table row each.
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


def one_call(x: torch.Tensor, folder: str, name_unchanged: bool) -> float:
    """Seconds for one request and its reply, synchronised at the end."""
    device = x.device
    started = time.perf_counter()
    request = exchange.pack([x])
    request.write(os.path.join(folder, "in.bin"))
    received: list = []
    sent = exchange.read_file(os.path.join(folder, "in.bin"), 1 << 40)
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
    reply = exchange.pack([output, handed], opaque=True, unchanged=unchanged)
    reply.write(os.path.join(folder, "out.bin"))
    blob = exchange.read_file(os.path.join(folder, "out.bin"), 1 << 40)
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
                for named in (False, True):
                    one_call(x, folder, named)  # warm: allocator, page cache
                    measured[named] = statistics.median(one_call(x, folder, named)
                                                        for _ in range(args.repeat))
                rows.append([parent, str(mb), f"{1e3 * measured[False]:.1f}",
                             f"{1e3 * measured[True]:.1f}",
                             f"{measured[False] / measured[True]:.2f}"])
                print("measured | " + " | ".join(rows[-1]), flush=True)
    print(f"device {args.device}, median of {args.repeat}")
    print(render_table(["files in", "input MB (fp32)", "ms, inputs sent back",
                        "ms, unchanged named", "ratio"], rows))


if __name__ == "__main__":
    main()
