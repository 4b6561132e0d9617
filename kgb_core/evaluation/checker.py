"""Inside the worker: import a candidate, check it on every case, time it against the reference.

Every trial gets fresh inputs from the operator's factory; the reference runs on its own copy
of them, the candidate on another, and a third copy proves the candidate left its inputs alone.
The first failing trial decides the verdict, and the check stops there.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from kgb_core.backends import Backend
from kgb_core.candidates import ENTRY_POINT
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.compare import Comparison, compare_outputs
from kgb_core.evaluation.launches import LaunchCounter
from kgb_core.evaluation.results import EvalResult
from kgb_core.operators import InputContext, OperatorSpec, ShapeCase
from kgb_core.stats import geometric_mean
from kgb_core.timing import Timer


@dataclass
class CheckSettings:
    seeds: Sequence[int]
    timing: bool


class CandidateFailure(Exception):
    def __init__(self, verdict: str, message: str) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.message = message


def clone_tree(value: Any) -> Any:
    """A deep copy of tensors (kept with their strides) inside tuples and lists."""
    if isinstance(value, torch.Tensor):
        copy = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                   device=value.device)
        copy.copy_(value)
        return copy
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v) for v in value)
    return value


def _unchanged(now: Any, before: Any) -> bool:
    if isinstance(before, torch.Tensor):
        if (not isinstance(now, torch.Tensor) or now.shape != before.shape
                or now.dtype != before.dtype):
            return False
        if before.dtype.is_floating_point:
            return bool(((now == before) | (now.isnan() & before.isnan())).all())
        return bool(torch.equal(now, before))
    if isinstance(before, (list, tuple)):
        return all(_unchanged(n, b) for n, b in zip(now, before))
    return True


def _nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    return 0


def _short_traceback(error: BaseException, candidate_path: str) -> str:
    """The exception, with only the frames in the candidate's own file (what its author needs)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == candidate_path]
    lines = [f"{type(error).__name__}: {error}"]
    for frame in frames[-5:]:
        lines.append(f'  line {frame.lineno}, in {frame.name}: {frame.line}')
    return "\n".join(lines)[:4000]


def _classify(error: BaseException) -> str:
    if isinstance(error, (MemoryError,)) or type(error).__name__ == "OutOfMemoryError":
        return verdicts.OOM
    names = {cls.__name__ for cls in type(error).__mro__}
    # Triton's interpreter wraps whatever a @triton.jit body raises in InterpreterError; those
    # are the errors (unknown tl functions, type or shape mismatches) the compiler reports on a
    # GPU, so both count as compile errors.
    if names & {"CompilationError", "CompileTimeAssertionFailure", "InterpreterError"}:
        return verdicts.COMPILE_ERROR
    if "out of memory" in str(error).lower():
        return verdicts.OOM
    return verdicts.RUNTIME_ERROR


_loaded = 0


def load_kernel(path: str) -> Callable[..., Any]:
    """Import the candidate file under a fresh module name and return its ``kernel``."""
    global _loaded
    _loaded += 1
    module_name = f"kgb_candidate_{_loaded}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CandidateFailure(verdicts.COMPILE_ERROR, f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise CandidateFailure(verdicts.COMPILE_ERROR,
                               "import failed: " + _short_traceback(error, path)) from None
    kernel = getattr(module, ENTRY_POINT, None)
    if not callable(kernel):
        raise CandidateFailure(verdicts.SCREEN_REJECTED,
                               f"`{ENTRY_POINT}` is missing or not callable after import")
    return kernel


class CandidateChecker:
    def __init__(self, backend: Backend, device: str, timer: Timer, counter: LaunchCounter) -> None:
        self.backend = backend
        self.device = device
        self.timer = timer
        self.counter = counter

    def evaluate(self, spec: OperatorSpec, candidate_path: str, settings: CheckSettings) -> EvalResult:
        started = time.perf_counter()
        result = EvalResult(op=spec.id, backend=self.backend.name, verdict=verdicts.PASS)
        try:
            kernel = load_kernel(candidate_path)
            self._check_correctness(spec, kernel, candidate_path, settings, result)
            if settings.timing:
                self._time(spec, kernel, candidate_path, result)
        except CandidateFailure as failure:
            result.verdict, result.message = failure.verdict, failure.message
        result.duration_s = time.perf_counter() - started
        return result

    # -- correctness ---------------------------------------------------------------------
    def _check_correctness(self, spec: OperatorSpec, kernel: Callable[..., Any], path: str,
                           settings: CheckSettings, result: EvalResult) -> None:
        quirks = self.backend.quirks
        ran = 0
        for case in spec.cases_in(quirks.case_tiers):
            for dtype in spec.dtypes:
                if dtype in quirks.skipped_dtypes:
                    result.cases.append({"case": case.name, "tier": case.tier, "dtype": dtype,
                                         "status": "skipped",
                                         "message": quirks.skipped_dtypes[dtype]})
                    continue
                for seed in settings.seeds:
                    record = self._check_trial(spec, kernel, path, case, dtype, seed)
                    result.cases.append(record)
                    ran += 1
                    if record["status"] != verdicts.PASS:
                        result.failing_case = record
                        raise CandidateFailure(record["status"], record["message"])
        if ran == 0:
            raise CandidateFailure(
                verdicts.SKIPPED_UNSUPPORTED,
                f"no case of {spec.id} can run on backend {self.backend.name} (tiers "
                f"{list(quirks.case_tiers)}, skipped dtypes {sorted(quirks.skipped_dtypes)}); "
                f"a check that runs nothing is not a pass")

    def _check_trial(self, spec: OperatorSpec, kernel: Callable[..., Any], path: str,
                     case: ShapeCase, dtype: str, seed: int) -> dict[str, Any]:
        record: dict[str, Any] = {"case": case.name, "tier": case.tier, "dtype": dtype,
                                  "seed": seed, "params": dict(case.params)}
        tolerance = spec.tolerance(dtype, case.params)
        record["tolerance"] = {"rtol": tolerance.rtol, "atol": tolerance.atol}
        inputs = list(spec.make_inputs(InputContext(case, dtype, seed, self.device)))
        reference_inputs = clone_tree(inputs)
        pristine = clone_tree(inputs)
        expected = spec.reference(*reference_inputs)
        self.backend.synchronize()
        self.backend.poison_free_memory(2 * _nbytes(expected))
        self.counter.reset()
        try:
            actual = kernel(*inputs)
            self.backend.synchronize()
        except Exception as error:
            record.update(status=_classify(error), message=_short_traceback(error, path))
            return record
        record["launches"] = self.counter.count
        if self.counter.count == 0:
            record.update(status=verdicts.NO_TRITON_LAUNCH,
                          message="kernel(...) returned without launching a @triton.jit kernel")
            return record
        for index, (now, before) in enumerate(zip(inputs, pristine)):
            if index not in spec.mutated_args and not _unchanged(now, before):
                record.update(status=verdicts.INPUT_MUTATED,
                              message=f"argument {index} was modified, and {spec.id} does not "
                                      f"write it")
                return record
        comparison = compare_outputs(actual, expected, tolerance)
        for index in spec.mutated_args:
            comparison.absorb(compare_outputs(inputs[index], reference_inputs[index], tolerance,
                                              where=f"argument {index} (written in place)"))
        record.update(status=comparison.verdict, message=comparison.message,
                      max_abs_error=comparison.max_abs_error,
                      max_rel_error=comparison.max_rel_error)
        return record

    # -- timing -------------------------------------------------------------------------
    def _time(self, spec: OperatorSpec, kernel: Callable[..., Any], path: str,
              result: EvalResult) -> None:
        quirks = self.backend.quirks
        for case in spec.cases_in(quirks.timed_tiers):
            for dtype in spec.dtypes:
                if dtype in quirks.skipped_dtypes:
                    continue
                inputs = list(spec.make_inputs(InputContext(case, dtype, 0, self.device)))
                reference_inputs = clone_tree(inputs)
                try:
                    candidate = self.timer.measure(lambda: kernel(*inputs))
                except Exception as error:
                    raise CandidateFailure(_classify(error), "while timing: "
                                           + _short_traceback(error, path)) from None
                baseline = spec.timing_baseline
                reference = self.timer.measure(lambda: baseline(*reference_inputs))
                result.timings.append({
                    "case": case.name, "tier": case.tier, "dtype": dtype,
                    "candidate": candidate.to_dict(), "reference": reference.to_dict(),
                    "speedup": reference.median_ms / candidate.median_ms
                    if candidate.median_ms > 0 else None,
                })
        result.timing_label = self.timer.label
        if result.timings:
            result.candidate_ms = geometric_mean(t["candidate"]["median_ms"] for t in result.timings)
            result.reference_ms = geometric_mean(t["reference"]["median_ms"] for t in result.timings)
            result.speedup = geometric_mean(t["speedup"] for t in result.timings)

