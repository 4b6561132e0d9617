"""Run the adversarial corpus and some reference kernels on a backend; print what each got.

``python benchmarks/anticheat_corpus.py --backend nvidia``: the same files the test suite runs on
the CPU (tests/adversarial/), plus reference kernels that must pass, on a real device: every
verdict must be the expected one, and the seconds per candidate show what the anti-cheat probes
cost there.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.plugins import load_registry
from kgb_core.report import render_table

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "adversarial"
REFERENCE_OPS = ("aten.neg", "aten.add", "aten.softmax", "aten.mm", "aten.cumsum",
                 "aten.embedding")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--reference-ops", default=",".join(REFERENCE_OPS),
                        help="comma-separated operators whose reference kernels must pass")
    args = parser.parse_args()
    registry = load_registry()
    backend = registry.backend(args.backend)
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=False)
    jobs = []
    for path in sorted(CORPUS.glob("*.py")):
        text = path.read_text()
        op = re.search(r"^# op: (\S+)$", text, re.MULTILINE).group(1)
        expect = re.search(r"^# expect: (\S+)$", text, re.MULTILINE).group(1)
        # A file may name what another backend must give instead (`# expect-nvidia: ...`).
        override = re.search(rf"^# expect-{re.escape(args.backend)}: (\S+)", text, re.MULTILINE)
        if override:
            expect = override.group(1)
        # And what it gets where runners have no OS sandbox (`# unsandboxed: ...`).
        unsandboxed = re.search(r"^# unsandboxed: (\S+)", text, re.MULTILINE)
        if unsandboxed and not find_sandbox().sandboxed:
            expect = unsandboxed.group(1)
        jobs.append((path.stem, op, expect, text))
    for op in filter(None, args.reference_ops.split(",")):
        jobs.append((f"reference {op}", op, "pass", registry.operator(op).reference_kernel()))
    rows, wrong = [], 0
    with Evaluator.for_backend(backend, settings) as evaluator:
        evaluator.start()
        for name, op, expect, source in jobs:
            started = time.perf_counter()
            result = evaluator.evaluate(op, source)
            seconds = time.perf_counter() - started
            ok = result.verdict == expect
            wrong += not ok
            rows.append([name, op, expect, result.verdict, "ok" if ok else "MISMATCH",
                         result.sandbox or "-", f"{seconds:.2f}",
                         "" if ok else result.message[:120]])
        starts = evaluator.worker_starts
    print(f"backend {backend.name} ({backend.device_name() if args.backend == 'cpu' else args.backend}), "
          f"{len(jobs)} candidates, {starts} worker starts")
    print(f"runner sandbox: {find_sandbox().name} ({find_sandbox().detail})")
    print(render_table(["candidate", "op", "expected", "got", "", "sandbox", "s", "message"],
                       rows))
    print(f"\n{len(jobs) - wrong} of {len(jobs)} as expected")


if __name__ == "__main__":
    main()
