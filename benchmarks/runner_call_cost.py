"""What one checked call costs inside a runner, step by step, in this process.

``python benchmarks/runner_call_cost.py --backend nvidia --op aten.neg --calls 40``

A checked candidate makes about 25 calls through its runner (shown cases, held-out cases, the
probes), and each call's round trip is most of a candidate's cost (``sweep_throughput.py
--profile`` shows it from the judge's side). This script plays both sides in one process,
without the sandbox: it preloads what the runner template preloads (``template._preload``),
makes a ``Runner`` over a scratch folder, loads the operator's reference kernel and sends it
``call`` requests with the operator's own inputs through a pair of arenas (the shared memory the
judge makes for each runner), as the judge does. It prints the wall time of each step of a call
(inputs placed and rebuilt, the recorders, the kernel, the checks, the output placed and read
back) and the functions with the most own time under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--op", default="aten.neg")
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()

    from kgb_core.plugins import load_registry

    registry = load_registry()
    backend = registry.backend(args.backend)
    for key, value in backend.worker_environment().items():
        os.environ.setdefault(key, value)
    from kgb_core.evaluation import arena, exchange, recorder, runner, runners, template
    from kgb_core.operators import InputContext
    from kgb_core.report import render_table

    from phase_clock import PhaseClock

    quirks = backend.quirks
    started = time.perf_counter()
    counter = template._preload({"backend_module": registry.backend_module(backend),
                                 "backend_name": backend.name,
                                 "max_num_warps": quirks.max_num_warps,
                                 "max_block_size": quirks.max_block_size})
    preloaded = time.perf_counter() - started
    spec = registry.operator(args.op)
    scratch = tempfile.mkdtemp(prefix="kgb-call-cost-", dir=runners.runners_root())
    # Watched before the runner exists: its integrity guard takes the wrapped functions as
    # the ones it found (wrapping them later reads as a candidate replacing them).
    phases = (PhaseClock()
              .watch(exchange, "pack", "pack a tree (inputs, output)")
              .watch(exchange.Packed, "place", "place a tree in an arena")
              .watch(arena.Arena, "for_reading", "map an arena to read")
              .watch(exchange, "unpack", "unpack a tree")
              .watch(runner.Runner, "_call", "runner: the checked call (all of it)")
              .watch(recorder.Recording, "__enter__", "recorders started")
              .watch(recorder.Recording, "__exit__", "recorders stopped")
              .watch(runner.Runner, "_check_recording", "recording checked")
              .watch(runner.Runner, "_check_integrity", "integrity checked")
              .watch(backend, "poison_free_memory", "free memory poisoned")
              .watch(backend, "synchronize", "device synchronised"))
    phases.__enter__()
    started = time.perf_counter()
    arenas = arena.Arenas.create(1 << 40)  # the judge's and the runner's, in one process
    the_runner = runner.Runner(backend, counter, scratch, arenas)
    with open(os.path.join(scratch, "candidate.py"), "w") as out:
        out.write(spec.reference_kernel())
    the_runner.handle({"op": "load", "file": "candidate.py"})
    set_up = time.perf_counter() - started
    device = the_runner.device
    cases = [(case, dtype) for case in spec.cases_in(quirks.case_tiers) for dtype in spec.dtypes
             if dtype not in quirks.skipped_dtypes]
    input_sets = [list(spec.make_inputs(InputContext(case, dtype, 0, device)))
                  for case, dtype in cases]

    def one_call(seq: int) -> None:
        packed = exchange.pack(input_sets[seq % len(input_sets)])
        reply = the_runner.handle({"op": "call", "seq": seq, "inputs": packed.tree,
                                   "bytes": packed.place(arenas.requests)})
        blob = arenas.replies.for_reading(reply["bytes"])
        exchange.unpack(reply["tree"], blob, device, sent=packed.sources)

    one_call(0)  # compiled, every lazy import done
    phases.seconds.clear()
    phases.counts.clear()
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    for seq in range(1, args.calls + 1):
        one_call(seq)
    profiler.disable()
    wall = time.perf_counter() - started
    phases.__exit__(None, None, None)
    print(f"backend {args.backend}, {args.op}: {len(input_sets)} input sets, {args.calls} calls "
          f"in {wall:.2f} s ({1e3 * wall / args.calls:.1f} ms a call); template preload "
          f"{preloaded:.2f} s, runner set up and candidate loaded {set_up:.2f} s")
    print(render_table(["step (inside: the call's steps are nested in 'the checked call')",
                        "times", "s, all", "s per call"],
                       phases.rows(args.calls, wall=wall,
                                   nested=("recorders started", "recorders stopped",
                                           "recording checked", "integrity checked",
                                           "free memory poisoned", "device synchronised",
                                           "unpack a tree", "map an arena to read"))))
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).strip_dirs().sort_stats("tottime").print_stats(args.top)
    print("\n== by own time")
    print("\n".join(line for line in stream.getvalue().splitlines()[6:] if line.strip()))
    sys.stdout.flush()
    os._exit(0)  # the runner's threads (profiler, lifeline) need no orderly end here


if __name__ == "__main__":
    main()
