"""Does the queue keep the device busy while the model is slow? Sequential vs concurrent.

``python benchmarks/queue_busy.py --backend cpu --latency-s 1.0``. A scripted, slow LLM
endpoint on 127.0.0.1 (OpenAI's chat-completions protocol; every answer takes ``--latency-s``
and is the operator's reference kernel, so every candidate passes and is timed) feeds the
``llm`` method. Four ways to run the same operators, each in a fresh store:

- ``sequential``: the loop kgb had before the queue: generate one candidate, evaluate it, then
  the next (``Method.generate`` then ``Evaluator.evaluate``, nothing overlapping);
- ``queue c=1``: ``run_sweep`` with one generation thread (generation overlaps evaluation);
- ``queue c=N``: ``--concurrency N``;
- ``queue c=N, 2 devices``: and two evaluation workers (``--devices 0,1``).

Device busy % is the time the device's worker spent evaluating over the wall time of the
sweep (worker start-up excluded, in every mode); throughput is candidates evaluated a minute;
device s/candidate is the evaluation time a candidate cost (the calibration
``scale_simulation.py`` takes for the CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from kgb_core.config import RunConfig
from kgb_core.evaluation.evaluator import Evaluator
from kgb_core.methods import GenerationContext
from kgb_core.plugins import load_registry
from kgb_core.progress import Progress
from kgb_core.report import render_table
from kgb_core.store import ResultStore
from kgb_core.sweep import evaluation_settings, plan_sweep, run_sweep

OPS = ["aten.neg", "aten.abs", "aten.relu", "aten.exp", "aten.sin", "aten.cos", "aten.sigmoid",
       "aten.silu"]
KEY_VARIABLE = "KGB_BENCH_LLM_KEY"


class SlowEndpoint:
    """127.0.0.1 only; answers every request with the asked operator's reference kernel
    after ``latency_s`` seconds. Bounded: it serves until the benchmark stops it."""

    def __init__(self, kernels: dict[str, str], latency_s: float) -> None:
        endpoint = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests += 1
                op = body["messages"][0]["content"].split("`")[1]
                time.sleep(latency_s)
                text = f"```python\n{kernels[op]}```"
                data = json.dumps({
                    "id": "bench", "object": "chat.completion", "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 500,
                              "total_tokens": 1500}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "SlowEndpoint":
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def _config(args: argparse.Namespace, base_url: str, **extra: Any) -> RunConfig:
    return RunConfig(ops=args.ops, method="llm", backend=args.backend, seeds=[0],
                     timing=not args.no_timing, timeout_s=300,
                     method_options={"base_url": base_url, "model": "scripted",
                                     "api_key_env": KEY_VARIABLE, "max_retries": 0,
                                     "cache": False}, **extra)


def sequential(args: argparse.Namespace, registry: Any, base_url: str) -> dict[str, float]:
    """The loop before the queue: generate, then evaluate, one operator at a time."""
    plan = plan_sweep(_config(args, base_url), registry)
    busy = 0.0
    with Evaluator.for_backend(plan.backend, evaluation_settings(plan.config)) as evaluator:
        evaluator.start()
        started = time.monotonic()
        for op in plan.operators:
            context = GenerationContext(options=plan.config.method_options,
                                        backend_name=plan.backend.name)
            for candidate in plan.method.generate(op, plan.backend.quirks, context):
                began = time.monotonic()
                result = evaluator.evaluate(op.id, candidate.source, method="llm")
                busy += time.monotonic() - began
                if not result.passed:
                    raise SystemExit(f"{op.id}: {result.verdict}: {result.message}")
        wall = time.monotonic() - started
    return {"wall_s": wall, "busy": [busy / wall], "candidates": len(plan.operators)}


def queued(args: argparse.Namespace, registry: Any, base_url: str, folder: Path, name: str,
           **extra: Any) -> dict[str, float]:
    plan = plan_sweep(_config(args, base_url, **extra), registry)
    with ResultStore(folder / f"{name}.db") as store:
        outcome = run_sweep(plan, registry, store, resume=False,
                            progress_factory=lambda total: Progress(total, stream=open(os.devnull, "w")))
        rows = store.results(outcome.run_id)
    failed = [r for r in rows if r["verdict"] != "pass"]
    if failed:
        raise SystemExit(f"{failed[0]['op']}: {failed[0]['verdict']}: {failed[0]['message']}")
    return {"wall_s": outcome.wall_s, "busy": [u.busy_s / outcome.wall_s for u in outcome.usage],
            "candidates": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--latency-s", type=float, default=1.0,
                        help="seconds the scripted endpoint takes per answer")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--devices", default="0,1",
                        help="devices for the last mode (on the CPU: worker slots)")
    parser.add_argument("--ops", nargs="+", default=OPS)
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault(KEY_VARIABLE, "sk-loopback")  # the endpoint checks nothing
    registry = load_registry()
    kernels = {op: registry.operator(op).reference_kernel() for op in args.ops}
    rows = []
    with SlowEndpoint(kernels, args.latency_s) as endpoint, \
            tempfile.TemporaryDirectory(prefix="kgb-queue-busy-") as folder:
        modes = [
            ("sequential (the loop before the queue)", lambda: sequential(args, registry,
                                                                            endpoint.base_url)),
            ("queue, concurrency 1, 1 device", lambda: queued(
                args, registry, endpoint.base_url, Path(folder), "c1")),
            (f"queue, concurrency {args.concurrency}, 1 device", lambda: queued(
                args, registry, endpoint.base_url, Path(folder), "cN",
                concurrency=args.concurrency)),
            (f"queue, concurrency {args.concurrency}, devices {args.devices}", lambda: queued(
                args, registry, endpoint.base_url, Path(folder), "cNd",
                concurrency=args.concurrency, devices=args.devices)),
        ]
        for label, run in modes:
            print(f"running: {label}", file=sys.stderr)
            measured = run()
            busy_s = sum(measured["busy"]) * measured["wall_s"]
            rows.append([label, f"{measured['wall_s']:.1f}",
                         " / ".join(f"{100 * b:.0f}%" for b in measured["busy"]),
                         f"{60 * measured['candidates'] / measured['wall_s']:.1f}",
                         f"{busy_s / measured['candidates']:.2f}"])
    print(f"backend {args.backend}, {len(args.ops)} operators, 1 candidate each, endpoint "
          f"latency {args.latency_s:g} s per answer, timing {'off' if args.no_timing else 'on'}")
    print(render_table(["mode", "wall s", "device busy", "candidates/min",
                        "device s/candidate"], rows))


if __name__ == "__main__":
    main()
