"""Run the adversarial corpus and some reference kernels on a backend; print what each got.

``python benchmarks/anticheat_corpus.py --backend nvidia``: the same files the test suite runs on
the CPU (tests/adversarial/, format in kgb_core/adversarial.py), plus reference kernels that must
pass, on a real device: every verdict must be the expected one, and the seconds per candidate
show what the anti-cheat probes cost there. Cheats run with the static screen off (what the
run-time checks alone make of them); the screen's verdict on each is a column of its own. Those
marked ``# timed: yes`` cheat only once timed: they run in a second evaluator with timing on
(column "timed"), the rest with timing off. On a CUDA backend the cheats only a GPU can run
(tests/adversarial/gpu/: side streams, device-to-host copies, L2 persistence) run too.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import time
from dataclasses import replace
from pathlib import Path

from kgb_core.adversarial import Cheat, read_corpus
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.evaluation.screen import screen_source
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
    parser.add_argument("--only", default="",
                        help="comma-separated name patterns (fnmatch, e.g. 'gpu/*'): run only "
                             "the candidates they match, reference kernels included")
    args = parser.parse_args()
    registry = load_registry()
    backend = registry.backend(args.backend)
    jobs = read_corpus(CORPUS, args.backend, find_sandbox().sandboxed)
    if backend.quirks.device_type == "cuda":  # side streams, device-to-host copies, L2
        jobs += [replace(cheat, name=f"gpu/{cheat.name}")
                 for cheat in read_corpus(CORPUS / "gpu", args.backend, find_sandbox().sandboxed)]
    for op in filter(None, args.reference_ops.split(",")):
        jobs.append(Cheat(f"reference {op}", op, verdicts.PASS, False,
                          registry.operator(op).reference_kernel()))
    patterns = [p for p in args.only.split(",") if p]
    if patterns:
        jobs = [job for job in jobs if any(fnmatch.fnmatch(job.name, p) for p in patterns)]
    rows, wrong = [], 0
    with contextlib.ExitStack() as stack:
        evaluators = {}
        for timed in sorted({job.timed for job in jobs}):
            settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=timed, screen=False)
            evaluators[timed] = stack.enter_context(Evaluator.for_backend(backend, settings))
            evaluators[timed].start()
        for job in jobs:
            finding = screen_source(job.text)
            screen = "rejected" if finding is not None else "-"
            started = time.perf_counter()
            if job.screen_only:  # only the screen can: nothing to run
                verdict, message = (finding.verdict if finding else verdicts.PASS), ""
            else:
                result = evaluators[job.timed].evaluate(job.op, job.text)
                verdict, message = result.verdict, result.message
            seconds = time.perf_counter() - started
            ok = verdict == job.expect and (finding is not None) == job.screen_rejects
            wrong += not ok
            rows.append([job.name, job.op, "yes" if job.timed else "-", job.expect, verdict,
                         screen, "ok" if ok else "MISMATCH", f"{seconds:.2f}",
                         "" if ok else message[:120]])
            # One line as each finishes, so a run cut short still says what it got.
            print("got | " + " | ".join(rows[-1]), flush=True)
        starts = sum(evaluator.worker_starts for evaluator in evaluators.values())
    print(f"backend {backend.name} ({backend.device_name() if args.backend == 'cpu' else args.backend}), "
          f"{len(jobs)} candidates, {starts} worker starts")
    print(f"runner sandbox: {find_sandbox().name} ({find_sandbox().detail})")
    print(render_table(["candidate", "op", "timed", "expected", "got (screen off)", "screen",
                        "", "s", "message"], rows))
    print(f"\n{len(jobs) - wrong} of {len(jobs)} as expected")


if __name__ == "__main__":
    main()
