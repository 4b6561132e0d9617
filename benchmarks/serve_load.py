"""Load on a real `kgb serve` (127.0.0.1 only, bounded in count and time): requests per minute,
latency percentiles, and what one evaluation costs through the service against `kgb eval`.

    python benchmarks/serve_load.py --backend cpu --requests 24 --clients 4

Prints one table; the last line is `requests N, clients C, wall S s, requests/min R`.
The first request is timed apart and left out of the percentiles.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post(url: str, body: dict, timeout: float) -> tuple[float, dict]:
    started = time.perf_counter()
    call = urllib.request.Request(url, data=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(call, timeout=timeout) as response:
        answer = json.loads(response.read())
    return time.perf_counter() - started, answer


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def described(answer: dict) -> str:
    """Where a request's time went, as its result tells: the judge's own duration, the wait for
    the device's lock (other judges' timings), and the worker that took it: a latency well
    above the judge's duration waited in the queue."""
    return (f"judge {float(answer.get('duration_s') or 0.0):.3f} s, lock wait "
            f"{float(answer.get('device_wait_s') or 0.0):.3f} s, on {answer.get('evaluated_on') or '-'}"
            + (f", run again alone after {answer['retried_alone']!r}"
               if answer.get("retried_alone") else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--op", default="aten.softmax")
    parser.add_argument("--candidate", default=str(ROOT / "tests/controls/softmax_online_rows.py"))
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--timing", action="store_true", help="timed evaluations (default: checks only)")
    parser.add_argument("--check-workers", type=int, default=2)
    parser.add_argument("--eval-runs", type=int, default=3, help="`kgb eval` runs to compare with")
    parser.add_argument("--limit-s", type=float, default=600.0, help="give up after this long")
    args = parser.parse_args()
    source = Path(args.candidate).read_text()
    body = {"op": args.op, "source": source, "timing": args.timing}
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = subprocess.Popen([sys.executable, "-m", "kgb_core", "serve", "--backend", args.backend,
                               "--port", str(port), "--check-workers", str(args.check_workers),
                               "--max-queue", str(max(64, args.requests))],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    deadline = time.monotonic() + args.limit_s
    try:
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"kgb serve did not start: {server.stderr.read()}")
                time.sleep(0.2)
        first_s, answer = post(f"{url}/evaluate", body, args.limit_s)
        # Each measurement is printed as it comes (stderr), so a run cut by a device call's
        # limit still leaves what it measured.
        print(f"first request {first_s:.3f} s: {answer.get('verdict')}, {described(answer)}",
              file=sys.stderr, flush=True)
        if answer.get("verdict") != "pass":
            raise SystemExit(f"the candidate did not pass: {answer.get('verdict')}: "
                             f"{answer.get('message')}")
        timed_answers = []
        for _ in range(3):
            timed_answers.append(post(f"{url}/evaluate", body, args.limit_s))
            print(f"one at a time: {timed_answers[-1][0]:.3f} s, "
                  f"{described(timed_answers[-1][1])}", file=sys.stderr, flush=True)
        sequential = [seconds for seconds, _ in timed_answers]
        # What the service adds to the evaluation: the latency less the judge's own duration.
        added = [seconds - float(got.get("duration_s") or 0.0) for seconds, got in timed_answers]
        latencies: list[float] = []
        verdicts: list[str] = []
        lock = threading.Lock()
        per_client = [args.requests // args.clients + (i < args.requests % args.clients)
                      for i in range(args.clients)]

        def client(count: int) -> None:
            for _ in range(count):
                if time.monotonic() > deadline:
                    return
                seconds, got = post(f"{url}/evaluate", body, args.limit_s)
                with lock:
                    latencies.append(seconds)
                    verdicts.append(got.get("verdict", "?"))
                    print(f"concurrent request {len(latencies)}: {seconds:.3f} s, "
                          f"{verdicts[-1]}, {described(got)}", file=sys.stderr, flush=True)

        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in per_client]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        # What each worker did (kgb serve's health): a job run again with the device to itself
        # (retried_alone) waited for every other check on it.
        workers = json.loads(urllib.request.urlopen(f"{url}/health", timeout=10).read())["workers"]
        for kind, slots in workers.items():
            print(f"{kind} workers: " + "; ".join(
                f"{slot['slot']} jobs {slot['jobs']} busy {slot['busy_s']:.1f} s judge starts "
                f"{slot['worker_starts']}" + (f" retried alone {slot['retried_alone']}"
                                              if slot.get("retried_alone") else "")
                + (f" sharing cap {slot['sharing_cap']}" if "sharing_cap" in slot else "")
                for slot in slots), file=sys.stderr, flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)
    eval_walls = []
    with open(os.devnull, "w") as quiet:
        for _ in range(args.eval_runs):
            begun = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kgb_core", "eval", args.candidate, "--op",
                            args.op, "--backend", args.backend, "--json"]
                           + ([] if args.timing else ["--no-timing"]),
                           stdout=quiet, stderr=quiet, timeout=args.limit_s, check=False)
            eval_walls.append(time.perf_counter() - begun)
    rows = [
        ("first request (the judges start with the server)", f"{first_s:.3f} s"),
        ("one request at a time, median of 3", f"{statistics.median(sequential):.3f} s"),
        ("  of which the service's own (HTTP, queue), median",
         f"{statistics.median(added) * 1000:.1f} ms"),
        (f"`kgb eval` (a process each), median of {len(eval_walls)}",
         f"{statistics.median(eval_walls):.3f} s" if eval_walls else "-"),
        (f"{len(latencies)} requests from {args.clients} clients: p50 / p90 / p99",
         " / ".join(f"{percentile(latencies, q):.3f}" for q in (0.5, 0.9, 0.99)) + " s"
         if latencies else "-"),
        ("verdicts", ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"kgb serve on {args.backend}, {args.op}, timing {'on' if args.timing else 'off'}, "
          f"{args.check_workers} check workers")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    rate = len(latencies) / wall * 60 if wall > 0 else 0.0
    print(f"requests {len(latencies)}, clients {args.clients}, wall {wall:.1f} s, "
          f"requests/min {rate:.1f}")


if __name__ == "__main__":
    main()
