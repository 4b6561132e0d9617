"""KernelBench-format problems under kgb, beside a plain in-process check in KernelBench's style.

``python benchmarks/kernelbench_checks.py --backend nvidia``: the suite's own problems
(tests/data/kernelbench/, written for kgb) with their passing answers (both shapes,
``kernel(...)`` and ``ModelNew``), timed by kgb, and the kernelbench cheats
(tests/adversarial/kernelbench/). Each row gives kgb's verdict and speedup, and what an
in-process check as KernelBench's own eval does it says of the same file:

- the problem and the candidate imported into one process, both models built from the same
  seed (a ``ModelNew`` then given the problem model's ``state_dict``, so an answer that leaves
  its own parameters uninitialised is not failed for that; a ``kernel(...)`` answer called with
  the problem model's values), ``get_inputs()`` as written (the large sizes);
- outputs ``torch.allclose(atol=1e-2, rtol=1e-2)`` on five seeds;
- the candidate's and the reference's forward timed with CUDA events (or wall clock on the
  CPU), 100 calls after 10 warm-up calls; on a GPU also with Triton's ``do_bench``, the clock
  kgb's timer is meant to match. Each timing column reads reference ms / candidate ms =
  speedup.

Where kgb fails what that check accepts, the row names kgb's check (its verdict and the first
words of its message). On the CPU backend only the small sizes run in Triton's interpreter, so
the in-process column is left out there (``--inprocess`` forces it; it runs the large sizes).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROBLEMS = REPO / "tests" / "data" / "kernelbench"
ANSWERS = REPO / "tests" / "data" / "kernelbench_candidates"
CHEATS = REPO / "tests" / "adversarial" / "kernelbench"
SEEDS = (0, 1, 2, 3, 4)


def _module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _to(value: Any, device: str) -> Any:
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def inprocess(problem: Path, candidate: Path,
              device: str) -> tuple[str, dict[str, tuple[float, float]] | None]:
    """KernelBench's style of check: (verdict, times); the verdict is 'pass' or why not, the
    times (reference ms, candidate ms) by clock: KernelBench's back-to-back CUDA events, and
    on a GPU Triton's ``do_bench`` (which kgb's timer is meant to match) beside them."""
    import torch

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ref_module = _module(problem, f"kb_ref_{problem.stem}_{candidate.stem}")
            new_module = _module(candidate, f"kb_new_{problem.stem}_{candidate.stem}")
    except Exception as error:  # noqa: BLE001 - KernelBench calls that a compile failure
        return f"compile: {type(error).__name__}", None

    def pair(seed: int) -> tuple[Any, Any, list]:
        torch.manual_seed(seed)
        init = list(ref_module.get_init_inputs())
        model = ref_module.Model(*init).to(device)
        torch.manual_seed(seed)
        inputs = [_to(x, device) for x in ref_module.get_inputs()]
        if hasattr(new_module, "ModelNew"):
            torch.manual_seed(seed)
            new = new_module.ModelNew(*init).to(device)
            new.load_state_dict(model.state_dict())
            return model, new, inputs
        state = [v.clone() for v in model.state_dict().values()]
        return model, (lambda *xs: new_module.kernel(*xs, *state, *init)), inputs

    try:
        for seed in SEEDS:
            model, new, inputs = pair(seed)
            with torch.no_grad():
                expected = model(*[_to(x, device) for x in inputs])
                got = new(*inputs)
            if got.shape != expected.shape or not torch.allclose(got, expected, atol=1e-2,
                                                                 rtol=1e-2):
                return f"wrong (seed {seed})", None
        model, new, inputs = pair(0)
        with torch.no_grad():
            times = {"events": (_time(model, inputs, device), _time(new, inputs, device))}
            if device != "cpu":
                from triton.testing import do_bench

                times["do_bench"] = (do_bench(lambda: model(*inputs)),
                                     do_bench(lambda: new(*inputs)))
            return "pass", times
    except Exception as error:  # noqa: BLE001 - KernelBench calls that a runtime error
        return f"error: {type(error).__name__}", None


def _time(function: Any, inputs: list, device: str, calls: int = 100) -> float:
    import torch

    for _ in range(10):
        function(*inputs)
    if device == "cpu":
        started = time.perf_counter()
        for _ in range(calls):
            function(*inputs)
        return (time.perf_counter() - started) / calls
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        function(*inputs)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def _ms_and_speedup(reference_ms: float | None, candidate_ms: float | None) -> str:
    if not reference_ms or not candidate_ms:
        return "-"
    return f"{reference_ms:.4g}/{candidate_ms:.4g} = {reference_ms / candidate_ms:.3g}"


def main() -> None:
    from kgb_core.adversarial import read_corpus
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
    from kgb_core.evaluation.sandbox import find_sandbox
    from kgb_core.plugins import load_registry
    from kgb_core.report import render_table
    from kgb_source_kernelbench import operator_name

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--inprocess", action="store_true",
                        help="run the in-process column on the CPU too (large sizes)")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--device-lead", action="store_true",
                        help="time with TimingSettings.device_lead (the device spins before "
                             "each start event as long as the host takes to issue a call)")
    args = parser.parse_args()
    registry = load_registry()
    backend = registry.backend(args.backend)
    device = "cuda" if backend.quirks.device_type == "cuda" else "cpu"
    by_op = {f"kernelbench.{operator_name(p)}": p for p in PROBLEMS.glob("*.py")}
    jobs = []  # (name, op, file, expected)
    for folder in sorted(f for f in ANSWERS.iterdir() if f.is_dir()):
        op = f"kernelbench.{operator_name(Path(folder.name + '.py'))}"
        for shape in ("kernel", "modelnew"):
            jobs.append((f"{folder.name}/{shape}", op, folder / f"{shape}.py", "pass"))
    for cheat in read_corpus(CHEATS, args.backend, find_sandbox().sandboxed):
        jobs.append((f"cheat {cheat.name}", cheat.op, CHEATS / f"{cheat.name}.py", cheat.expect))
    settings = EvaluationSettings(seeds=(0, 1), timeout_s=300, timing=not args.no_timing,
                                  timing_settings={"device_lead": True} if args.device_lead
                                  else {},
                                  screen=False,
                                  source_options={"kernelbench": {"path": str(PROBLEMS)}})
    rows, wrong = [], 0
    with Evaluator.for_backend(backend, settings) as evaluator:
        for name, op, path, expected in jobs:
            started = time.monotonic()
            result = evaluator.evaluate(op, path.read_text())
            seconds = time.monotonic() - started
            # A problem with literal shapes has no small case: on the CPU it is skipped.
            wrong += result.verdict != expected and not (
                device == "cpu" and result.verdict == "skipped_unsupported")
            plain, times = ("-", None)
            if device == "cuda" or args.inprocess:
                plain, times = inprocess(by_op[op], path, device)
            caught = (f"{result.verdict}: {result.message[:70]}"
                      if result.verdict != "pass" and plain == "pass" else "")
            rows.append([name, expected, result.verdict,
                         _ms_and_speedup(result.reference_ms, result.candidate_ms), plain,
                         _ms_and_speedup(*(times or {}).get("events", (None, None))),
                         _ms_and_speedup(*(times or {}).get("do_bench", (None, None))),
                         f"{seconds:.1f}", caught])
            print(" | ".join(rows[-1]), flush=True)  # as it goes: a cut run keeps its rows
    print("timings: reference ms / candidate ms = speedup (kgb's; the in-process check's, by "
          "back-to-back CUDA events; Triton's do_bench on the same calls)")
    print(render_table(["candidate", "expected", "kgb", "kgb timing", "in-process check",
                        "events timing", "do_bench timing", "kgb s",
                        "where kgb rejects what it accepts: kgb's check"],
                       rows))
    print(f"\n{len(rows)} candidates, {wrong} not as expected; backend {args.backend}, "
          f"device {backend.device_name()}, sandbox {find_sandbox().name}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
