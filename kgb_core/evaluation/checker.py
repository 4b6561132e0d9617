"""Inside the worker: import a candidate, check it on every case, probe it for cheats, time it.

Order of one evaluation, each step able to end it with its verdict:
1. the integrity guard records torch/triton/time/builtins/harness attributes, then the
   candidate is imported under a fresh module name;
2. every shown case x dtype x seed, then the held-out cases, each a *trial*: fresh inputs, free
   memory poisoned with NaN, the call under the torch-op recorder with launches counted and
   threads watched, then the integrity guard, output aliasing, input mutation, and only then the
   reference, on its own copy of the inputs (so no expected output exists in memory during the
   call) and the comparison;
3. a rewritten-inputs trial: the same tensors called twice, with new values written into them
   in between, so a result cached by identity, pointer or shape shows (stale_output when the
   first call's answer comes back; any other miss is a wrong_output);
4. ghost replay: one more call with every Triton launch a no-op, which must not come out right;
5. timing of candidate and baseline on the same inputs, on the harness's stream, then the
   guard again (a patched clock) and one more rewritten-inputs call (caching while timed).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from kgb_core.backends import Backend
from kgb_core.candidates import ENTRY_POINT
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.compare import Comparison, compare_outputs
from kgb_core.evaluation.integrity import IntegrityGuard
from kgb_core.evaluation.launches import LaunchCounter
from kgb_core.evaluation.recorder import TorchOpRecorder
from kgb_core.evaluation.results import EvalResult
from kgb_core.operators import SMALL, InputContext, OperatorSpec, ShapeCase, Tolerance
from kgb_core.stats import geometric_mean
from kgb_core.timing import Timer

# Seeds no shown trial uses, for the probes: their expected outputs never existed before.
REWRITE_SEEDS = (7_000_003, 7_000_019)
GHOST_SEED = 7_000_037
AFTER_TIMING_SEED = 7_000_057

# A heldout trial failing in one of these ways means the kernel was fitted to what it saw.
_FITTING_FAILURES = frozenset({verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                               verdicts.RUNTIME_ERROR, verdicts.COMPILE_ERROR})


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


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


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


def case_label(spec: OperatorSpec, case: ShapeCase) -> str:
    """A case's name in results; held-out cases get a neutral one, since names hint at shapes."""
    if not case.heldout:
        return case.name
    heldout = [c for c in spec.cases if c.heldout]
    return f"heldout-{heldout.index(case) + 1}"


def _os_threads() -> set[str]:
    """The process's threads as the kernel sees them (Linux), Python-made or not."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def _fingerprint(value: Any) -> tuple:
    """Cheap identity of an output's values, to tell a stale output from a merely wrong one."""
    return tuple((tuple(t.shape), str(t.dtype), float(t.double().sum()),
                  float(t.double().abs().sum())) for t in _tensors(value))


def _short_traceback(error: BaseException, candidate_path: str) -> str:
    """The exception, with only the frames in the candidate's own file (what its author needs)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == candidate_path]
    lines = [f"{type(error).__name__}: {error}"]
    for frame in frames[-5:]:
        lines.append(f'  line {frame.lineno}, in {frame.name}: {frame.line}')
    # Triton reports an error inside a called @triton.jit function as a CompilationError at
    # the call site, with the real reason (and the inner line) only in the chained cause.
    lines.extend(f"caused by {type(cause).__name__}: {cause}" for cause in _causes(error))
    text = "\n".join(lines)
    return text if len(text) <= 4000 else text[:1500] + "\n...\n" + text[-2500:]


def _causes(error: BaseException, limit: int = 4) -> list[BaseException]:
    """The exceptions ``error`` was raised from, innermost last (a cycle-safe walk)."""
    chain: list[BaseException] = []
    cause = error.__cause__ or error.__context__
    while cause is not None and len(chain) < limit and cause not in chain and cause is not error:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def _classify(error: BaseException) -> str:
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return verdicts.OOM
    names = {cls.__name__ for cls in type(error).__mro__}
    # Triton's interpreter wraps whatever a @triton.jit body raises in InterpreterError; those
    # are the errors (unknown tl functions, type or shape mismatches) the compiler reports on a
    # GPU, so both count as compile errors.
    if names & {"CompilationError", "CompileTimeAssertionFailure", "InterpreterError"}:
        return verdicts.COMPILE_ERROR
    text = str(error).lower()
    if "out of memory" in text or "can't allocate memory" in text:
        return verdicts.OOM
    return verdicts.RUNTIME_ERROR


_module_numbers = itertools.count(1)  # an iterator, not an int: see integrity.py on state


def load_kernel(path: str) -> Callable[..., Any]:
    """Import the candidate file under a fresh module name and return its ``kernel``."""
    module_name = f"kgb_candidate_{next(_module_numbers)}"
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
    def __init__(self, backend: Backend, device: str, timer: Timer, counter: LaunchCounter,
                 harness_stream: Any = None) -> None:
        self.backend = backend
        self.device = device
        self.timer = timer
        self.counter = counter
        self.harness_stream = harness_stream
        # Byte sizes of the tensors the last call returned: the caching allocator hands those
        # freed blocks to the next call's outputs of the same size, so they are poisoned too
        # (an output that depends on no input, zeros or arange, would otherwise find the last
        # call's right answer in its new block: on the H200, ghost replay "matched").
        self._last_output_bytes: list[int] = []

    def evaluate(self, spec: OperatorSpec, candidate_path: str, settings: CheckSettings) -> EvalResult:
        started = time.perf_counter()
        result = EvalResult(op=spec.id, backend=self.backend.name, verdict=verdicts.PASS,
                            emulates=self.backend.emulates)
        self.path = candidate_path
        self.guard = IntegrityGuard()
        try:
            self.kernel = load_kernel(candidate_path)
            self._check_integrity("while being imported")
            first = self._check_correctness(spec, settings, result)
            self._check_rewritten_inputs(spec, first, REWRITE_SEEDS, "on a repeated call")
            self._ghost_replay(spec, first)
            if settings.timing:
                self._time(spec, result)
        except CandidateFailure as failure:
            result.verdict, result.message = failure.verdict, failure.message
        finally:
            self.counter.ghost = False
        result.duration_s = time.perf_counter() - started
        return result

    # -- one guarded call ------------------------------------------------------------------
    def _check_integrity(self, when: str) -> None:
        changed = self.guard.changes()
        if changed:
            raise CandidateFailure(verdicts.TAMPERING, f"{when}, the candidate replaced "
                                   f"{', '.join(changed[:5])}")

    def _call(self, inputs: list[Any], *, ghost: bool = False) -> Any:
        """kernel(*inputs) with every call-level rule enforced; raises CandidateFailure."""
        self.backend.synchronize()
        self.backend.poison_free_memory(2 * sum(t.numel() * t.element_size()
                                                for t in _tensors(inputs)))
        for nbytes in self._last_output_bytes:
            self.backend.poison_free_memory(nbytes)
        threads_before = set(threading.enumerate())
        tasks_before = _os_threads() if self.backend.watch_os_threads else set()
        self.counter.reset()
        self.counter.ghost = ghost
        recorder = TorchOpRecorder()
        try:
            with recorder:
                actual = self.kernel(*inputs)
            self.backend.synchronize()
        except Exception as error:
            if self.counter.limit_violations:
                raise CandidateFailure(verdicts.LIMIT_EXCEEDED,
                                       self.counter.limit_violations[0]) from None
            raise CandidateFailure(_classify(error), _short_traceback(error, self.path)) from None
        finally:
            self.counter.ghost = False
        self._last_output_bytes = [t.untyped_storage().nbytes() for t in _tensors([actual])][:8]
        if self.counter.limit_violations:  # the candidate caught the error and went on
            raise CandidateFailure(verdicts.LIMIT_EXCEEDED, self.counter.limit_violations[0])
        self._check_integrity("during kernel(...)")
        leftover = [t.name for t in threading.enumerate()
                    if t not in threads_before and t.is_alive()]
        if self.backend.watch_os_threads:
            leftover += [f"OS thread {task}" for task in _os_threads() - tasks_before]
        if leftover:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   f"kernel(...) returned with {len(leftover)} thread(s) of its "
                                   f"own still running ({leftover[0]})")
        foreign = {s for s in self.counter.streams if s != self.harness_stream}
        if foreign:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   "a Triton kernel was launched on a stream other than the "
                                   "harness's, where the timer cannot see it")
        if self.counter.count == 0 and not ghost:
            raise CandidateFailure(verdicts.NO_TRITON_LAUNCH,
                                   "kernel(...) returned without launching a @triton.jit kernel")
        if recorder.forbidden and not ghost:
            raise CandidateFailure(verdicts.REFERENCE_USED,
                                   f"torch computed during kernel(...): "
                                   f"{', '.join(sorted(set(recorder.forbidden))[:5])}; only "
                                   f"allocation, views and copies may be done with torch")
        return actual

    def _judge(self, spec: OperatorSpec, case: ShapeCase, dtype: str, inputs: list[Any],
               pristine: list[Any], reference_inputs: list[Any], actual: Any) -> dict[str, Any]:
        """Aliasing, input mutation and the comparison with the reference, as a trial record."""
        protected = {t.untyped_storage().data_ptr() for i, value in enumerate(inputs)
                     if i not in spec.mutated_args for t in _tensors(value) if t.numel()}
        for tensor in _tensors(actual):
            if tensor.numel() and tensor.untyped_storage().data_ptr() in protected:
                return {"status": verdicts.OUTPUT_ALIASES_INPUT,
                        "message": "the output shares memory with an input; "
                                   f"{spec.id} returns a new tensor"}
        for index, (now, before) in enumerate(zip(inputs, pristine)):
            if index not in spec.mutated_args and not _unchanged(now, before):
                return {"status": verdicts.INPUT_MUTATED,
                        "message": f"argument {index} was modified, and {spec.id} does not "
                                   f"write it"}
        comparison, tolerance = self._compare_with_reference(spec, case, dtype, actual, inputs,
                                                             reference_inputs)
        return {"status": comparison.verdict, "message": comparison.message,
                "tolerance": {"rtol": tolerance.rtol, "atol": tolerance.atol},
                "max_abs_error": comparison.max_abs_error,
                "max_rel_error": comparison.max_rel_error}

    def _compare_with_reference(self, spec: OperatorSpec, case: ShapeCase, dtype: str,
                                actual: Any, inputs: list[Any],
                                reference_inputs: list[Any]) -> tuple[Comparison, Tolerance]:
        """The reference, run now on its own copy of the inputs, against the return value and
        every argument the operator writes in place."""
        expected = spec.reference(*reference_inputs)
        self.backend.synchronize()
        tolerance = spec.tolerance(dtype, case.params)
        if spec.compared is not None:
            return compare_outputs(spec.compared(actual, inputs),
                                   spec.compared(expected, reference_inputs), tolerance), tolerance
        comparison = compare_outputs(actual, expected, tolerance)
        for index in spec.mutated_args:
            comparison.absorb(compare_outputs(inputs[index], reference_inputs[index], tolerance,
                                              where=f"argument {index} (written in place)"))
        return comparison, tolerance

    def _trial(self, spec: OperatorSpec, case: ShapeCase, dtype: str, seed: int) -> tuple[dict[str, Any], Any]:
        inputs = list(spec.make_inputs(InputContext(case, dtype, seed, self.device)))
        pristine, reference_inputs = clone_tree(inputs), clone_tree(inputs)
        record: dict[str, Any] = {"case": case_label(spec, case), "tier": case.tier,
                                  "dtype": dtype, "seed": seed, "heldout": case.heldout}
        if not case.heldout:
            record["params"] = dict(case.params)
        try:
            actual = self._call(inputs)
        except CandidateFailure as failure:
            record.update(status=failure.verdict, message=failure.message)
            return record, None
        record["launches"] = self.counter.count
        record.update(self._judge(spec, case, dtype, inputs, pristine, reference_inputs, actual))
        return record, actual

    # -- correctness ---------------------------------------------------------------------
    def _runnable(self, spec: OperatorSpec, result: EvalResult) -> list[tuple[ShapeCase, str]]:
        quirks = self.backend.quirks
        runnable = []
        cases = spec.cases_in(quirks.case_tiers)
        for case in sorted(cases, key=lambda c: c.heldout):  # shown cases first
            for dtype in spec.dtypes:
                if dtype in quirks.skipped_dtypes:
                    result.cases.append({"case": case_label(spec, case), "tier": case.tier,
                                         "dtype": dtype, "status": "skipped",
                                         "heldout": case.heldout,
                                         "message": quirks.skipped_dtypes[dtype]})
                else:
                    runnable.append((case, dtype))
        if not runnable:
            raise CandidateFailure(
                verdicts.SKIPPED_UNSUPPORTED,
                f"no case of {spec.id} can run on backend {self.backend.name} (tiers "
                f"{list(quirks.case_tiers)}, skipped dtypes {sorted(quirks.skipped_dtypes)}); "
                f"a check that runs nothing is not a pass")
        return runnable

    def _check_correctness(self, spec: OperatorSpec, settings: CheckSettings,
                           result: EvalResult) -> tuple[ShapeCase, str]:
        """Every runnable trial; returns the (case, dtype) the probes run on."""
        runnable = self._runnable(spec, result)
        seen_outputs: set[tuple] = set()
        for case, dtype in runnable:
            for seed in settings.seeds:
                record, actual = self._trial(spec, case, dtype, seed)
                if (record["status"] == verdicts.WRONG_OUTPUT and actual is not None
                        and _fingerprint(actual) in seen_outputs):
                    record.update(status=verdicts.STALE_OUTPUT,
                                  message="kernel(...) returned an earlier call's output for "
                                          "new inputs: " + record["message"])
                if case.heldout and record["status"] in _FITTING_FAILURES:
                    record.update(status=verdicts.HELDOUT_FAILED,
                                  message=f"every shown case passed, but a held-out case failed "
                                          f"({record['status']}); its details are withheld so "
                                          f"that they cannot be fitted")
                    record.pop("max_abs_error", None)
                result.cases.append(record)
                if record["status"] != verdicts.PASS:
                    result.failing_case = record
                    raise CandidateFailure(record["status"], record["message"])
                if actual is not None:
                    seen_outputs.add(_fingerprint(actual))
        return self._probe_case(spec, runnable)

    def _probe_case(self, spec: OperatorSpec, runnable: list[tuple[ShapeCase, str]]) -> tuple[ShapeCase, str]:
        """The shown small case with the most input elements: a tiny case (a 0-d tensor, say)
        can leave a cached or kernel-less output right by chance, a larger one cannot."""
        shown = [(c, d) for c, d in runnable if not c.heldout] or runnable
        small = [(c, d) for c, d in shown if c.tier == SMALL] or shown

        def size(entry: tuple[ShapeCase, str]) -> int:
            inputs = spec.make_inputs(InputContext(entry[0], entry[1], 0, "cpu"))
            return sum(t.numel() for t in _tensors(list(inputs)))

        return max(small, key=size)

    def _check_rewritten_inputs(self, spec: OperatorSpec, first: tuple[ShapeCase, str],
                                seeds: tuple[int, int], when: str) -> None:
        """Call on inputs, write new values into the same tensors, call again: must follow."""
        case, dtype = first
        inputs = list(spec.make_inputs(InputContext(case, dtype, seeds[0], self.device)))
        self._call_with_new_values(spec, case, dtype, inputs, seeds[1], when)

    def _call_with_new_values(self, spec: OperatorSpec, case: ShapeCase, dtype: str,
                              inputs: list[Any], seed: int, when: str) -> None:
        """A call, new values written into the same input tensors, one more call: the first
        call's answer coming back is a stale output, any other wrong answer a wrong output."""
        before = clone_tree(self._call(list(inputs)))
        fresh = list(spec.make_inputs(InputContext(case, dtype, seed, self.device)))
        for target, values in zip(_tensors(inputs), _tensors(fresh)):
            target.copy_(values)
        pristine, reference_inputs = clone_tree(inputs), clone_tree(inputs)
        actual = self._call(inputs)
        record = self._judge(spec, case, dtype, inputs, pristine, reference_inputs, actual)
        if record["status"] != verdicts.PASS:
            verdict = record["status"]
            if verdict == verdicts.WRONG_OUTPUT and (spec.mutated_args
                                                     or _unchanged(actual, before)):
                # In place, every call moves the state on: no single "before" to compare, so
                # a wrong answer there counts as stale, as it always did.
                verdict = verdicts.STALE_OUTPUT
            raise CandidateFailure(verdict, f"{when}, with new values written into the same "
                                   f"input tensors: {record['message']}")

    def _ghost_replay(self, spec: OperatorSpec, first: tuple[ShapeCase, str]) -> None:
        case, dtype = first
        inputs = list(spec.make_inputs(InputContext(case, dtype, GHOST_SEED, self.device)))
        reference_inputs = clone_tree(inputs)
        try:
            actual = self._call(inputs, ghost=True)
        except CandidateFailure as failure:
            if failure.verdict in (verdicts.TAMPERING, verdicts.DEFERRED_WORK):
                raise
            return  # crashing without its kernels is what a real kernel does
        comparison, _ = self._compare_with_reference(spec, case, dtype, actual, inputs,
                                                     reference_inputs)
        if comparison.ok:
            raise CandidateFailure(verdicts.GHOST_REPLAY_MATCHED,
                                   "with every Triton launch made a no-op, kernel(...) still "
                                   "returned the right output: the result does not come from "
                                   "its Triton kernels")

    # -- timing -------------------------------------------------------------------------
    def _time(self, spec: OperatorSpec, result: EvalResult) -> None:
        quirks = self.backend.quirks
        timed = [(case, dtype) for case in spec.cases_in(quirks.timed_tiers) if not case.heldout
                 for dtype in spec.dtypes if dtype not in quirks.skipped_dtypes]
        kernel, baseline = self.kernel, spec.timing_baseline
        for case, dtype in timed:
            inputs = list(spec.make_inputs(InputContext(case, dtype, 0, self.device)))
            reference_inputs = clone_tree(inputs)
            self.counter.reset()
            try:
                candidate = self.timer.measure(lambda: kernel(*inputs))
            except Exception as error:
                raise CandidateFailure(_classify(error), "while timing: "
                                       + _short_traceback(error, self.path)) from None
            self._check_integrity("while being timed")
            if {s for s in self.counter.streams if s != self.harness_stream}:
                raise CandidateFailure(verdicts.DEFERRED_WORK, "while being timed, a Triton "
                                       "kernel was launched on a stream other than the harness's")
            reference = self.timer.measure(lambda: baseline(*reference_inputs))
            result.timings.append({
                "case": case.name, "tier": case.tier, "dtype": dtype,
                "candidate": candidate.to_dict(), "reference": reference.to_dict(),
                "speedup": reference.median_ms / candidate.median_ms
                if candidate.median_ms > 0 else None,
            })
            # The timed inputs get new values: an output cached while timed shows here.
            self._call_with_new_values(spec, case, dtype, inputs, AFTER_TIMING_SEED,
                                       "after timing")
        result.timing_label = self.timer.label
        if result.timings:
            result.candidate_ms = geometric_mean(t["candidate"]["median_ms"] for t in result.timings)
            result.reference_ms = geometric_mean(t["reference"]["median_ms"] for t in result.timings)
            result.speedup = geometric_mean(t["speedup"] for t in result.timings)
