"""The judge's checks of one candidate: an ordered list of stages, each with the verdicts it may give.

The judge never runs candidate code. It draws every input from the seed, keeps its own pristine
and reference copies, hands the runner (``kgb_core.evaluation.runner``, another process, in the
sandbox) only the tensors of one call at a time, runs the reference itself, compares the bytes
the runner handed back, and decides. The stages, in order, each able to end the evaluation:

1. ``import``: the runner imports the candidate and finds ``kernel``;
2. ``trials``: every shown case x dtype x seed: fresh inputs, the call, then aliasing, input
   mutation and the comparison with the reference (computed only after the call returned);
3. ``held-out``: the same on cases never shown in prompts; a failure there reads
   ``heldout_failed`` with its details withheld;
4. ``rewritten inputs``: the same tensors called twice with new values written in between, so a
   result cached by identity, pointer or shape shows (``stale_output`` when the first call's
   answer comes back; any other miss is a ``wrong_output``);
5. ``ghost replay``: one more checked call on new values, then the same inputs with every Triton
   launch a no-op, which must come out wrong and otherwise alike (launch count, no exception);
6. ``timing``: the candidate timed by the runner under the same recorders as a checked call,
   cycling through three input sets with new values written before every call (scaled by a
   factor no other call gets), a random sample of its timed outputs compared with the reference
   on the values it saw; the baseline timed by the judge on its own copies. Only the timed
   calls hold the device alone: the sets are drawn and handed to the runner (and, where other
   judges share the device, a baseline to be measured gets its untimed first call) before,
   and the samples copied out of the runner and compared after, beside other judges' checks;
7. ``after timing``: for each timed case, one more rewritten-inputs call on its timed tensors
   (caching while timed), beside other judges' checks: it needs no device to itself, and
   outside the exclusive hold it no longer keeps every other judge on the device waiting.

Verdicts about the channel and the process (timeout, crash, out of memory, a forged message)
are made in one place, ``kgb_core.evaluation.harness_verdicts``.
"""

from __future__ import annotations

import itertools
import random
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Sequence

import torch

from kgb_core.evaluation import exchange, judge_status, reference_cache, verdicts
from kgb_core.evaluation.backend_gaps import note_gap
from kgb_core.evaluation.baselines import BaselineCache
from kgb_core.evaluation.compare import Comparison, compare_outputs
from kgb_core.evaluation.device_lock import DeviceLock, NoLock
from kgb_core.evaluation.draw_ahead import DrawPlan
from kgb_core.evaluation.job_memory import storage_bytes, timed_cases
from kgb_core.evaluation.overlap import overlapping
from kgb_core.evaluation.products import BOUNDED_DTYPES, bounded_reference
from kgb_core.evaluation.results import EvalResult
from kgb_core.evaluation.runner import (EVERY_CALL_UP_TO, RUNNER_VERDICTS, CandidateFailure,
                                        clone_tree, tensors_in, vary_values)
from kgb_core.evaluation.runners import ChannelViolation, RunnerChannel
from kgb_core.operators import (SMALL, InputContext, OperatorSpec, Rounded, ShapeCase,
                                Tolerance, WithTolerance)
from kgb_core.stats import geometric_mean
from kgb_core.timing import Timer, Timing, stored_label

# Seeds no shown trial uses, for the probes: their expected outputs never existed before.
REWRITE_SEEDS = (7_000_003, 7_000_019)
GHOST_SEED = 7_000_037
# A probe's case holds at least this many input elements, where one does.
PROBE_MIN_ELEMENTS = 64
_RANDOM = random.SystemRandom()
AFTER_TIMING_SEED = 7_000_057
# The input sets a timed case cycles through (distinct storages and values), and how many of
# its timed outputs the runner hands back, drawn at random, for comparison.
TIMING_SEEDS = (0, 7_000_071, 7_000_081)
TIMED_SAMPLES = 2
# The inputs (one copy of a case's three sets) handed over before one exclusive hold: the
# judge keeps a pristine copy of each, the runner the sets, until the hold ends. The median
# operator's timed sets come to 0.94 GiB on a GPU (the largest, aten.scaled_dot_product_attention,
# to 33 GiB): most take one hold, and a judge and its runner hold about twice this more than
# when each case was drawn inside the hold (on an 80 GB H100, eight judges side by side
# already ran out of device memory before).
TIMED_BATCH_BYTES = 1 << 30

# A heldout trial failing in one of these ways means the kernel was fitted to what it saw.
_FITTING_FAILURES = frozenset({verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                               verdicts.RUNTIME_ERROR, verdicts.COMPILE_ERROR})
# What one call's comparison can say.
_JUDGED = frozenset({verdicts.PASS, verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                     verdicts.INPUT_MUTATED, verdicts.OUTPUT_ALIASES_INPUT})


@dataclass
class CheckSettings:
    seeds: Sequence[int]
    timing: bool
    # The probe pool's entry both probes take (an audit's; EvaluationSettings.probe_draw), or
    # None: each at random.
    probe_draw: int | None = None


@dataclass
class TrialRecord:
    """One call's record in a result: which case, and what the judge found."""

    case: str
    tier: str
    dtype: str
    heldout: bool
    seed: int | None = None
    params: dict[str, Any] | None = None
    status: str = verdicts.PASS
    message: str = ""
    launches: int | None = None
    tolerance: dict[str, float] | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class CallOutcome:
    """What came back from one call in the runner, rebuilt on the judge's device."""

    actual: Any
    inputs_after: list[Any]
    launches: int
    # The torch copies that rearranged memory during the call (recorder.StagedCopies), each
    # with the candidate's line that made it.
    staged: list[Any] = field(default_factory=list)
    staged_sites: list[str] = field(default_factory=list)
    # Where the operator only moves data: the torch copies that moved it (StagedCopies.moved).
    moved: list[str] = field(default_factory=list)


# How a stage holds the device's lock (Stage.device).
SHARED, BY_STEP = "shared", "by step"


@dataclass(frozen=True)
class Stage:
    name: str
    gives: frozenset[str]
    run: Callable[["Evaluation"], None]
    # How the stage holds the device's lock (device_lock.py): SHARED as a whole, or BY_STEP
    # (it takes it itself: shared trial by trial, or exclusive for its timings).
    device: str = SHARED


def _versions(tree: Any) -> list[int]:
    """The version counters of the tensors under ``tree``: each in-place write moves one."""
    return [t._version for t in tensors_in(tree)]


def _unchanged(now: Any, before: Any) -> bool:
    if isinstance(before, torch.Tensor):
        if (not isinstance(now, torch.Tensor) or now.shape != before.shape
                or now.dtype != before.dtype):
            return False
        if before.dtype.is_floating_point:
            return bool(((now == before) | (now.isnan() & before.isnan())).all())
        return bool(torch.equal(now, before))
    if isinstance(before, (list, tuple)):
        return (isinstance(now, (list, tuple)) and len(now) == len(before)
                and all(_unchanged(n, b) for n, b in zip(now, before)))
    return True


def _reference_tensors(value: Any) -> list[Any]:
    """The tensors of a reference's answer, inside its ``Rounded`` and ``WithTolerance``."""
    if isinstance(value, (Rounded, WithTolerance)):
        return _reference_tensors(value.value)
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _reference_tensors(v)]
    return tensors_in(value)


def _varies(value: Any) -> bool:
    """Whether some tensor of a reference's answer holds two different values."""
    for tensor in _reference_tensors(value):
        flat = tensor.reshape(-1)
        if flat.numel() > 1 and bool((flat != flat[0]).any()):
            return True
    return False


def case_label(spec: OperatorSpec, case: ShapeCase) -> str:
    """A case's name in results; held-out cases get a neutral one, since names hint at shapes."""
    if not case.heldout:
        return case.name
    heldout = [c for c in spec.cases if c.heldout]
    return f"heldout-{heldout.index(case) + 1}"


def _fingerprint(value: Any) -> tuple:
    """Cheap identity of an output's values, to tell a stale output from a merely wrong one."""
    return tuple((tuple(t.shape), str(t.dtype), float(t.double().sum()),
                  float(t.double().abs().sum())) for t in tensors_in(value))


def _holds(values: Any, output: Any, tolerance: Tolerance) -> bool:
    """Whether ``values``, read in order, are ``output``'s within ``tolerance`` (shape and
    dtype aside: a copy may be flat, or of a wider dtype, and still be the answer)."""
    try:
        converted = values.detach().reshape(output.shape).to(output.dtype)
    except (RuntimeError, TypeError):
        return False
    return compare_outputs(converted, output, tolerance).ok


def _readings(copy: Any, output: Any, widest: float = 4) -> list[Any]:
    """How a kept copy may hold an output: its values, where it has as many; its bits read as
    the output's dtype, where it has as many bytes (a transpose done on an integer or byte view
    of the input, ``x.view(torch.int16).t().contiguous()``, holds the answer's bits); inside
    it, where it is up to ``widest`` times the output's size (``_pitched``)."""
    readings = [copy] if copy.numel() == output.numel() else []
    if (copy.dtype != output.dtype and output.numel()
            and copy.numel() * copy.element_size() == output.numel() * output.element_size()):
        try:
            readings.append(copy.detach().contiguous().reshape(-1).view(torch.uint8)
                            .view(output.dtype))
        except (RuntimeError, TypeError):
            pass
    if (copy.dtype == output.dtype and copy.dtype != torch.bool and not copy.is_complex()
            and output.numel() > 1 and output.numel() < copy.numel() <= widest * output.numel()):
        readings.extend(_pitched(copy.detach().reshape(-1), output))
    return readings


# How many places a search for the answer inside a wider buffer tries, for its first element
# and then for its second row's: a buffer holds few copies of one value, an answer one place.
PITCH_CANDIDATES = 8


def _pitched(flat: Any, output: Any) -> list[Any]:
    """The answer's possible places inside a kept buffer wider than it, up to four times
    (pieces assembled in a buffer with room to spare): the output's rows (its last dim) at some
    offset, one row every ``pitch`` elements, where the buffer holds the output's first value
    and, a row or more later, its second row's first value. Each a view of the buffer, to be
    compared whole."""
    answer = output.detach().reshape(-1, output.shape[-1] if output.dim() else 1)
    rows, cols = answer.shape
    if cols == 0:
        return []

    def near(value: Any) -> Any:
        return ((flat - value).abs() <= 1e-6 + 1e-3 * value.abs()).nonzero().reshape(-1)

    found = []
    for offset in near(answer[0, 0])[:PITCH_CANDIDATES].tolist():
        if rows == 1:
            if offset + cols <= flat.numel():
                found.append(flat[offset:offset + cols])
            continue
        later = near(answer[1, 0])
        for place in later[later >= offset + cols][:PITCH_CANDIDATES].tolist():
            pitch = place - offset
            if offset + (rows - 1) * pitch + cols <= flat.numel():
                found.append(flat.as_strided((rows, cols), (pitch, 1), offset))
    return found


def _storages(value: Any) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in tensors_in(value) if t.numel()}


def _phases(described: Any) -> dict[str, float]:
    """The runner's own split of a time or samples request (a diagnostic it may get wrong,
    never read by a verdict): names to seconds, anything else dropped."""
    if not isinstance(described, dict):
        return {}
    return {str(name)[:40]: float(seconds) for name, seconds in list(described.items())[:8]
            if isinstance(seconds, (int, float))}


@dataclass
class _TimedCase:
    """A timed case between its hand-over and its check: the pristine copies of its input
    sets (what its sampled outputs are compared on), its record in ``EvalResult.timings`` once
    timed (where the samples' copying out is added after the hold), and the samples."""

    case: ShapeCase
    dtype: str
    slot: str
    pristine: list[list[Any]] | None
    nbytes: int
    samples: Any = None
    timing: dict[str, Any] | None = None
    # Seconds the baseline's untimed first call took, made before the hold
    # (``Evaluation._warm_baselines``); None where the timer makes it, inside the hold.
    baseline_warmed_s: float | None = None
    # The pristine sets were moved to the host once handed over (``Evaluation._offloads``):
    # whatever computes on them works on device copies.
    offloaded: bool = False


class Evaluation:
    """One candidate's checks: the judge's state, the runner's channel, the stages."""

    def __init__(self, spec: OperatorSpec, backend: Any, device: str, timer: Timer | None,
                 channel: RunnerChannel, settings: CheckSettings,
                 timing_settings: dict[str, Any] | None = None, deadline: float = float("inf"),
                 baselines: BaselineCache | None = None,
                 device_lock: DeviceLock | NoLock | None = None) -> None:
        self.spec = spec
        self.backend = backend
        self.device = device
        self.timer = timer
        self.channel = channel
        self.settings = settings
        self.timing_settings = timing_settings or {}
        self.deadline = deadline
        # The judge's kept baseline timings (one Evaluation's own when none is given).
        self.baselines = baselines if baselines is not None else BaselineCache()
        # Shared while checking, exclusive while timing (device_lock.py): other judges on the
        # device check beside this one, and none runs while a kernel here is timed.
        self.device_lock = device_lock if device_lock is not None else NoLock()
        self.result = EvalResult(op=spec.id, backend=backend.name, verdict=verdicts.PASS,
                                 emulates=backend.emulates)
        self.runnable: list[tuple[ShapeCase, str]] = []
        self.seen_outputs: set[tuple] = set()
        # The probes' cases, each drawn at random among the cases run (``probe_pool``).
        self.probe: tuple[ShapeCase, str] | None = None
        self.ghost_case: tuple[ShapeCase, str] | None = None
        # The storages the last request handed over, which its reply may name unchanged.
        self._sent: list[Any] = []
        # Each timed case's kept tensors in the runner (its first timed set), for the call
        # after timing: (case, dtype, slot).
        self._timed_slots: list[tuple[ShapeCase, str, str]] = []
        self._stage = ""  # the stage running, whose shared steps _checking counts
        self._sharing = 0  # how deep in _checking (a step inside a step is one step)
        self._aside_s = 0.0  # seconds with the lock set aside inside steps (no step's)
        # Slow references' answers, kept for the operator's next candidate (reference_cache.py).
        self.references = reference_cache.CACHE
        # The job's draws, made ahead on a thread of their own (draw_ahead.py; judges sharing
        # a device only): planned once the runnable cases are known.
        self._draw_plan: DrawPlan | None = None

    # -- the stages --------------------------------------------------------------------------
    def stages(self) -> list[Stage]:
        runner = RUNNER_VERDICTS
        trial = _JUDGED | {verdicts.STALE_OUTPUT, verdicts.SKIPPED_UNSUPPORTED} | runner
        stages = [
            Stage("import", frozenset({verdicts.COMPILE_ERROR, verdicts.SCREEN_REJECTED,
                                       verdicts.TAMPERING, verdicts.RUNTIME_ERROR,
                                       verdicts.OOM, verdicts.DEFERRED_WORK}),
                  Evaluation._import),
            Stage("trials", trial, Evaluation._shown_trials, BY_STEP),
            Stage("held-out", frozenset({verdicts.HELDOUT_FAILED}) | trial,
                  Evaluation._heldout_trials, BY_STEP),
            Stage("rewritten inputs", _JUDGED | {verdicts.STALE_OUTPUT} | runner,
                  Evaluation._rewritten_inputs),
            Stage("ghost replay", frozenset({verdicts.GHOST_REPLAY_MATCHED,
                                             verdicts.GHOST_REPLAY_DETECTED}) | trial,
                  Evaluation._ghost_replay),
        ]
        if self.settings.timing:
            # Exclusive once for every timed case (a batch of them: ``_time``): each time a
            # judge asks for the device alone it waits for every other judge's step running
            # to end (on the H200, taking it per case left the device idle most of the sweep).
            # Drawing, handing over and comparing happen outside that hold.
            stages.append(Stage("timing", _JUDGED | {verdicts.STALE_OUTPUT} | runner,
                                Evaluation._time, BY_STEP))
            stages.append(Stage("after timing", _JUDGED | {verdicts.STALE_OUTPUT} | runner,
                                Evaluation._after_timing, BY_STEP))
        return stages

    def run(self, candidate_file: str) -> EvalResult:
        started = time.perf_counter()
        lock = self.device_lock
        waited, waited_alone, alone = lock.waited_s, lock.waited_alone_s, lock.held_alone_s
        gathered = lock.gathered_s
        self.candidate_file = candidate_file
        for stage in self.stages():
            began = time.perf_counter()
            judge_status.note(op=self.spec.id, stage=stage.name, stage_since=time.time())
            self._stage = stage.name
            try:
                with self._holding(stage.device):
                    stage.run(self)
            except CandidateFailure as failure:
                if failure.verdict not in stage.gives:
                    failure = CandidateFailure(
                        verdicts.HARNESS_ERROR, f"the {stage.name} stage gave {failure.verdict}, "
                        f"which it does not declare: {failure.message}")
                self.result.verdict, self.result.message = failure.verdict, failure.message
                break
            finally:
                self.result.stage_s[stage.name] = round(time.perf_counter() - began, 3)
                peak = self.backend.device_memory_peak(reset=True)
                if peak is not None:
                    self.result.judge_peak_by_stage[stage.name] = peak
        if self._draw_plan is not None:
            self._draw_plan.stop()
            self.result.drawn_ahead_s = round(self.result.drawn_ahead_s
                                              + self._draw_plan.drawn_s, 4)
            self.result.draw_ahead_waited_s = round(self.result.draw_ahead_waited_s
                                                    + self._draw_plan.waited_s, 4)
        note_gap(self.result, self.backend.name, self.backend.quirks)
        self.result.device_wait_s = round(lock.waited_s - waited, 3)
        self.result.device_wait_alone_s = round(lock.waited_alone_s - waited_alone, 3)
        self.result.device_alone_s = round(lock.held_alone_s - alone, 3)
        self.result.device_gathered_s = round(lock.gathered_s - gathered, 3)
        self.result.duration_s = time.perf_counter() - started
        judge_status.note(stage="", stage_since=None)
        return self.result

    def _import(self) -> None:
        request = {"op": "load", "file": self.candidate_file,
                   # The runner then names every torch copy that moved data (StagedCopies).
                   "moves_data": self.spec.moves_data}
        if self.spec.module_contract is not None:
            request["module_contract"] = self.spec.module_contract.to_dict()
        self._request(request)

    def _shown_trials(self) -> None:
        self.runnable = self._runnable()
        self._plan_draws()
        for case, dtype in self.runnable:
            if not case.heldout:
                self._trials_of(case, dtype)
        pool = probe_pool(self.spec, self.runnable)
        draw = self.settings.probe_draw
        if draw is None:
            self.probe, self.ghost_case = _RANDOM.choice(pool), _RANDOM.choice(pool)
        else:
            self.probe = self.ghost_case = pool[draw % len(pool)]
        for stage, (case, dtype) in (("rewritten inputs", self.probe),
                                     ("ghost replay", self.ghost_case)):
            self.result.probes[stage] = f"{case_label(self.spec, case)}/{dtype}"

    def _heldout_trials(self) -> None:
        for case, dtype in self.runnable:
            if case.heldout:
                self._trials_of(case, dtype)

    def _rewritten_inputs(self) -> None:
        case, dtype = self.probe
        self._call_with_new_values(case, dtype, REWRITE_SEEDS[1], "on a repeated call",
                                   slot="probe", inputs=self._draw(case, dtype, REWRITE_SEEDS[0]))

    def _ghost_replay(self) -> None:
        """The same inputs twice: a checked call, then one with every launch a no-op. The
        second must come out wrong, and otherwise just like the first: the same number of
        launches, no exception of its own (a candidate that tells the replay from a real call
        could behave well only when its kernels run)."""
        case, dtype, inputs = self._ghost_inputs()
        label = case_label(self.spec, case)
        pristine, ghost_inputs = self._copies(inputs)
        real = self._call(inputs)
        status, message, _ = self._judge(case, dtype, real, pristine, clone_tree(pristine))
        if status != verdicts.PASS:
            raise CandidateFailure(status, f"on new values of {label}: {message}")
        reference_inputs = clone_tree(ghost_inputs)
        try:
            outcome = self._call(ghost_inputs, ghost=True)
        except CandidateFailure as failure:
            if failure.verdict in (verdicts.TAMPERING, verdicts.DEFERRED_WORK):
                raise
            raise CandidateFailure(verdicts.GHOST_REPLAY_DETECTED,
                                   f"with every Triton launch made a no-op, kernel(...) failed "
                                   f"on {label} ({failure.verdict}), where the same inputs "
                                   f"passed with its launches run: {failure.message[:600]}"
                                   ) from None
        if outcome.launches != real.launches:
            raise CandidateFailure(verdicts.GHOST_REPLAY_DETECTED,
                                   f"with every Triton launch made a no-op, kernel(...) "
                                   f"launched {outcome.launches} kernels on {label}, against "
                                   f"{real.launches} with its launches run: it behaves "
                                   f"differently when its kernels do nothing")
        comparison, _ = self._compare_with_reference(case, dtype, outcome, reference_inputs)
        if comparison.ok:
            raise CandidateFailure(verdicts.GHOST_REPLAY_MATCHED,
                                   f"with every Triton launch made a no-op, kernel(...) still "
                                   f"returned the right output on {label}: the result does not "
                                   f"come from its Triton kernels")

    def _ghost_inputs(self) -> tuple[ShapeCase, str, list[Any]]:
        """The replay's case and inputs: the drawn case, unless the reference's answer there is
        one value throughout (``ne`` on operands that never match: all True), which output
        memory the launches never wrote can hold by chance; then another, at random."""
        tried: list[tuple[ShapeCase, str]] = []
        case, dtype = self.ghost_case
        while True:
            inputs = self._draw(case, dtype, GHOST_SEED)
            reference_inputs = clone_tree(inputs)
            expected = self._reference(reference_inputs)
            written = [reference_inputs[i] for i in self.spec.mutated_args
                       if i < len(reference_inputs)]
            if _varies([expected, written]):
                self.result.probes["ghost replay"] = f"{case_label(self.spec, case)}/{dtype}"
                return case, dtype, inputs
            tried.append((case, dtype))
            others = [entry for entry in self.runnable if entry not in tried]
            if not others:
                return case, dtype, inputs  # every case's answer is constant: nothing better
            case, dtype = _RANDOM.choice(others)

    def _time(self) -> None:
        """Every timed case: its input sets drawn and handed to the runner beside other judges'
        checks, then timed (the candidate's calls and the baseline's) with the device held
        alone, then its sampled outputs compared beside the checks again. Only the timings
        hold the device alone; cases go in batches of at most ``TIMED_BATCH_BYTES`` of
        inputs, one exclusive hold each (most operators: one)."""
        timed = timed_cases(self.spec, self.backend.quirks)
        batch: list[_TimedCase] = []
        for index, (case, dtype) in enumerate(timed):
            batch.append(self._hand_over_timed(index, case, dtype))
            if sum(entry.nbytes for entry in batch) >= TIMED_BATCH_BYTES:
                self._time_batch(batch)
                batch = []
        if batch:
            self._time_batch(batch)
        self.result.timing_label = stored_label(self.timer.label,
                                                self.backend.timings_measure_hardware)
        if self.result.timings:
            timings = self.result.timings
            self.result.candidate_ms = geometric_mean(t["candidate"]["median_ms"] for t in timings)
            self.result.reference_ms = geometric_mean(t["reference"]["median_ms"] for t in timings)
            self.result.speedup = geometric_mean(t["speedup"] for t in timings)

    def _hand_over_timed(self, index: int, case: ShapeCase, dtype: str) -> "_TimedCase":
        """One timed case's three input sets, drawn, kept pristine here, and put in the
        runner under a name of their own (its memory then holds them until they are timed):
        a step each, since a step is what a judge about to time waits for (the three sets of
        cublas.cublasCcopy_v2's largest case, handed over as one step, took 6.8 s on the
        H100 at 45f5df4, the device's other judges waiting through it)."""
        slot = f"timed-{index}"
        sets: list[list[Any]] = []
        offload = self._offloads(case, dtype)
        moved: list[int] = []  # the sets moved to the host, each wholly on the device before
        for seed in TIMING_SEEDS:
            self._draw_ahead(case, dtype, seed)
            with self._checking():
                # The drawn sets are the pristine copies themselves: the runner gets its own
                # through the arena, and everything here that computes on them (the baseline,
                # the samples' references) works on clones. A clone more held another batch
                # of the device's memory while it was handed over (judges sharing an H100 ran
                # out at a sweep's start).
                sets.append(self._draw(case, dtype, seed))
                self._request({"op": "put", "keep": slot + "-sets", "append": True},
                              inputs=sets[-1])
                # Handed over as drawn (a host tensor among the inputs is one the operator
                # takes on the host), then kept on the host where nothing times on them.
                offload = offload and all(t.device.type != "cpu" for t in tensors_in(sets[-1]))
                if offload:
                    with self._part("copies"):
                        sets[-1] = clone_tree(sets[-1], "cpu")
                    moved.append(len(sets) - 1)
        if not offload:  # a set that could not go: the case's sets all stay on the device
            for index_moved in moved:
                sets[index_moved] = clone_tree(sets[index_moved], self.device)
        return _TimedCase(case, dtype, slot, sets, storage_bytes(sets), offloaded=offload)

    def _offloads(self, case: ShapeCase, dtype: str) -> bool:
        """Whether a timed case's pristine sets go to the host once handed over: where its
        baseline is not timed on them in this hold. The judge computes on them on the device
        only to time its baseline; the samples' references work on device copies made one at
        a time after the hold (``_timed_inputs``). A baseline reused from the store (367 of
        402 timed cases on the H100 at 7e429d5) left them on the device through the hold for
        nothing, a batch of the job's memory, in jobs whose memory decides how many share the
        device (job_memory.py: 39 % of that sweep's worker time went waiting for it). Not on
        the host's own backend, where they are on the host already."""
        return (self.device != "cpu" and self.spec.time_baseline is None
                and not self.baselines.would_measure(self._baseline_key_of(case, dtype)))

    def _time_batch(self, batch: list["_TimedCase"]) -> None:
        """A batch's timings under one exclusive hold; then, beside other judges' checks,
        each case's sampled outputs fetched from the runner (which kept each case's under its
        own name) and compared."""
        self._warm_baselines(batch)
        with self._locked(self.device_lock.exclusive):
            for entry in batch:
                self._time_case(entry)
        for entry in batch:
            with self._checking():
                self._fetch_timed_samples(entry)
                self._check_timed_samples(entry.case, entry.dtype, entry.samples,
                                          entry.pristine, self._where(entry))
            entry.pristine = entry.samples = None  # the memory, for the next batch
            self._timed_slots.append((entry.case, entry.dtype, entry.slot))

    def _time_case(self, entry: "_TimedCase") -> None:
        """The candidate's timing (in the runner, on the sets it was handed, its sampled
        outputs kept there under the case's slot) and the baseline's (the judge's, on copies
        of the same sets). Only timings: this runs with the device held alone."""
        spec, case, dtype = self.spec, entry.case, entry.dtype
        began = time.perf_counter()
        reply = self._request({"op": "time", "keep": entry.slot, "reuse": entry.slot + "-sets",
                               "settings": self.timing_settings,
                               "sample": TIMED_SAMPLES, "written": list(spec.mutated_args),
                               "variation": self._variation(),
                               "sample_seed": _RANDOM.randrange(1 << 62)})
        candidate = Timing(**reply["timing"])
        timed = time.perf_counter()
        warmed = entry.baseline_warmed_s is not None
        versions = _versions(entry.pristine)
        kept, reused = self.baselines.get_or_measure(
            self._baseline_key(entry),
            lambda: self._time_baseline(self._baseline_sets(entry), warmed))
        if _versions(entry.pristine) != versions:
            raise CandidateFailure(verdicts.HARNESS_ERROR,
                                   f"the baseline of {case_label(spec, case)} wrote its inputs, "
                                   f"which {spec.id} does not declare (mutated_args): its "
                                   f"timed samples cannot be checked")
        reference = kept.timing
        entry.timing = {
            "case": case.name, "tier": case.tier, "dtype": dtype,
            "candidate": candidate.to_dict(), "reference": reference.to_dict(),
            "reference_measured_at": kept.measured_at, "reference_reused": reused,
            **({"reference_recheck_ms": kept.recheck_ms}
               if kept.recheck_ms is not None else {}),
            "speedup": reference.median_ms / candidate.median_ms
            if candidate.median_ms > 0 else None,
            # Where the exclusive hold's time went for this case (diagnostic): the runner's
            # time request, as the runner split it, and the baseline.
            "hold_s": {"candidate": round(timed - began, 4),
                       "baseline": round(time.perf_counter() - timed, 4),
                       "runner": _phases(reply.get("phases"))},
            # The baseline's untimed first call, made before the hold (outside hold_s).
            **({"baseline_warmed_s": round(entry.baseline_warmed_s, 4)} if warmed else {}),
        }
        self.result.timings.append(entry.timing)

    def _baseline_sets(self, entry: "_TimedCase") -> list[list[Any]]:
        """The sets the baseline is timed on: copies of the pristine sets where the operator
        writes its arguments (or times its baseline its own way), else the pristine sets
        themselves, which the baseline only reads. A copy of each held one more batch of timed
        sets on the device through the hold, in a job whose memory decides how many others
        share the device (job_memory.py). Whether it only read them is checked after, by
        their version counters (``_time_case``): a baseline that wrote them would have the
        samples compared on values no candidate saw."""
        if self.spec.mutated_args or self.spec.time_baseline is not None or entry.offloaded:
            return [clone_tree(one, self._where(entry)) for one in entry.pristine]
        return entry.pristine

    def _where(self, entry: "_TimedCase") -> str | None:
        """Where copies of ``entry``'s pristine sets are made to compute on: the device where
        they were moved to the host, else where each tensor is."""
        return self.device if entry.offloaded else None

    def _baseline_key(self, entry: "_TimedCase") -> tuple[str, ...]:
        """The timed case's key among the judge's kept baselines (``BaselineCache.key``)."""
        return self._baseline_key_of(entry.case, entry.dtype)

    def _baseline_key_of(self, case: ShapeCase, dtype: str) -> tuple[str, ...]:
        return BaselineCache.key(self.spec.id, case.name, dtype, self.timer.label,
                                 self.timing_settings, dict(case.params))

    def _warm_baselines(self, batch: list["_TimedCase"]) -> None:
        """Each baseline about to be measured gets its untimed first call here, beside other
        judges' checks, before the batch's exclusive hold: nothing is measured in that call,
        yet inside the hold it kept every other judge on the device waiting (on the H100,
        vllm.convert_vertical_slash_indexes's baseline, a Python loop of 20 s a call: 38 s
        held alone for its timing, half of it this call). Alone on its device (``NoLock``)
        no judge waits, and the timer makes the call as before; an operator's own baseline
        timer (``OperatorSpec.time_baseline``) makes its own."""
        if isinstance(self.device_lock, NoLock) or self.spec.time_baseline is not None:
            return
        for entry in batch:
            if not self.baselines.would_measure(self._baseline_key(entry)):
                continue
            with self._checking():
                began = time.perf_counter()
                # A copy: the pristine sets are what the timed samples are compared on.
                if self.spec.baseline is None:  # the reference itself, on the host if it is
                    # Computed, never a kept answer: the call is the baseline's warm-up.
                    self._reference(clone_tree(entry.pristine[0], self._where(entry)),
                                    keep=False)
                else:
                    self.spec.baseline(*clone_tree(entry.pristine[0], self._where(entry)))
                self.backend.synchronize()
                entry.baseline_warmed_s = time.perf_counter() - began

    def _fetch_timed_samples(self, entry: "_TimedCase") -> None:
        """The timed outputs the runner sampled for ``entry``, asked for after the hold
        (copying them out is no timed work) and copied out of its reply for comparison. What
        it took goes in the case's timing record as ``samples_s``, outside ``hold_s``: the
        request's round trip (the runner's packing included) and the judge's copying out."""
        began = time.perf_counter()
        reply = self._request({"op": "samples", "of": entry.slot})
        asked = time.perf_counter()
        try:
            entry.samples = [(int(i), int(v), int(scaled), out, after) for i, v, scaled, out,
                             after in self._unpack_reply(reply["samples"])]
        except (KeyError, TypeError, ValueError, OSError) as error:
            raise ChannelViolation(f"the runner's timed samples are not what was asked: "
                                   f"{error}") from None
        if entry.timing is not None:
            entry.timing["samples_s"] = {"request": round(asked - began, 4),
                                         "unpack": round(time.perf_counter() - asked, 4),
                                         "runner": _phases(reply.get("phases"))}

    def _after_timing(self) -> None:
        """The timed inputs get new values: an output cached while timed shows here. A step
        each: held as one, the stage was the longest step a judge about to time waited for
        (1.7 s an operator on the H100, four or five calls of the largest cases)."""
        for case, dtype, slot in self._timed_slots:
            self._draw_ahead(case, dtype, AFTER_TIMING_SEED)
            with self._checking():
                self._call_with_new_values(case, dtype, AFTER_TIMING_SEED, "after timing",
                                           slot=slot)

    def _time_baseline(self, sets: list[list[Any]], warmed: bool = False) -> Timing:
        """The baseline's timing on the judge's own copies of the timed input sets. ``warmed``:
        its untimed first call was made before the hold (``_warm_baselines``)."""
        spec = self.spec
        if spec.time_baseline is not None:  # timed where the reference may run
            return spec.time_baseline(self.timing_settings, sets)
        turns = itertools.cycle(sets)
        return self.timer.measure(lambda: spec.timing_baseline(*next(turns)), warmed=warmed)

    def _check_timed_samples(self, case: ShapeCase, dtype: str,
                             entries: list[tuple[int, int, int, Any, Any]],
                             pristine: list[list[Any]], where: str | None = None) -> None:
        """The timed outputs the runner sampled (call, value set, scale, output, arguments
        after it), each against the reference on the values it was computed from; for an
        operator that writes its arguments, the arguments as the call left them (the runner
        copied them before the next call on that set). ``where``: the device the pristine
        sets' copies are made on, where they were moved to the host (``_where``)."""
        if not 1 <= len(entries) <= max(TIMED_SAMPLES, EVERY_CALL_UP_TO) or any(
                not 0 <= values < len(pristine) or not -1 <= scaled <= call
                or (after is None) != (not self.spec.mutated_args)
                or (after is not None and len(after) != len(pristine[values]))
                for call, values, scaled, _, after in entries):
            raise ChannelViolation("the runner's timed samples are not what was asked")
        label = case_label(self.spec, case)
        for call, values, scaled, output, after in entries:
            seen = self._timed_inputs(pristine[values], scaled, where)
            outcome = CallOutcome(output, after if after is not None else clone_tree(seen), 0)
            comparison, _ = self._compare_with_reference(case, dtype, outcome, clone_tree(seen))
            overlap = overlapping(tensors_in(output))
            if comparison.ok and not overlap:
                continue
            # Another set's answer: of the calls just before this one (an output replayed
            # from the last turn) or of the first ones (an answer cached when timing began and
            # returned ever after, which a timer of hundreds of calls puts far back).
            window = 2 * len(pristine)
            earlier_calls = sorted(set(range(-1, min(call, window)))
                                   | set(range(max(-1, call - window), call)))
            stale = any(self._compare_with_reference(case, dtype, outcome,
                                                     self._timed_inputs(other, earlier,
                                                                        where))[0].ok
                        for other in pristine for earlier in earlier_calls
                        if earlier != scaled)
            if stale:
                raise CandidateFailure(verdicts.STALE_OUTPUT, f"while timed, call {call} on "
                                       f"{label} returned another input set's answer")
            verdict = verdicts.WRONG_SHAPE_OR_DTYPE if comparison.ok else comparison.verdict
            raise CandidateFailure(verdict, f"while timed, call {call} on {label} returned "
                                   f"{overlap or comparison.message}")

    # -- the device lock -------------------------------------------------------------------------
    @contextmanager
    def _checking(self) -> Iterator[None]:
        """One step of checking, beside other judges' steps on the device. Its length goes in
        ``EvalResult.shared_steps``: a judge about to time waits for the longest step under
        way on the device to end, and every other judge waits with it."""
        with self._locked(self.device_lock.shared):
            self._sharing += 1
            began, aside = time.perf_counter(), self._aside_s
            try:
                yield
            finally:
                self._sharing -= 1
                if not self._sharing:
                    self._count_step(time.perf_counter() - began - (self._aside_s - aside))

    @contextmanager
    def _part(self, name: str) -> Iterator[None]:
        """Seconds of a shared step spent on ``name`` (``EvalResult.step_parts``): counted only
        inside a step, since the same work inside an exclusive hold is the hold's record."""
        began, aside = time.perf_counter(), self._aside_s
        try:
            yield
        finally:
            if self._sharing:
                self._add_part(name, time.perf_counter() - began - (self._aside_s - aside))

    def _add_part(self, name: str, seconds: float) -> None:
        parts = self.result.step_parts.setdefault(self._stage, {})
        parts[name] = round(parts.get(name, 0.0) + seconds, 4)

    def _count_step(self, seconds: float) -> None:
        count, total, longest = self.result.shared_steps.get(self._stage, (0, 0.0, 0.0))
        self.result.shared_steps[self._stage] = [count + 1, round(total + seconds, 4),
                                                 round(max(longest, seconds), 4)]

    @contextmanager
    def _holding(self, how: str) -> Iterator[None]:
        """A stage's hold on the device (``Stage.device``)."""
        if how == BY_STEP:
            yield
            return
        with self._checking():
            yield

    @contextmanager
    def _locked(self, take: Callable[[], Any]) -> Iterator[None]:
        # Time spent waiting for the device is not the candidate's: its deadline moves on.
        waited = self.device_lock.waited_s
        with take():
            self.deadline += self.device_lock.waited_s - waited
            yield

    # -- calls through the runner --------------------------------------------------------------
    def _request(self, payload: dict[str, Any], inputs: list[Any] | None = None) -> dict[str, Any]:
        """One request; a failure the runner reports ends the evaluation with its verdict."""
        self._sent = []
        if inputs is not None:
            with self._part("pack"):
                packed = exchange.pack(list(inputs))
                self._sent = packed.sources  # what the reply may name instead of sending back
                payload = {**payload, "inputs": packed.tree,
                           "bytes": packed.place(self.channel.arenas.requests)}
        with self._part("request"):
            reply = self.channel.request(payload, self.deadline)
        if self._sharing:  # the runner's own split of the request, where it gave one
            for name, seconds in _phases(reply.get("phases")).items():
                self._add_part(f"runner {name}", seconds)
        failure = reply.get("failure")
        if failure is not None:
            verdict = failure.get("verdict") if isinstance(failure, dict) else None
            if verdict not in RUNNER_VERDICTS:
                raise ChannelViolation(f"the runner reported the verdict {verdict!r}, which "
                                       f"only the judge gives")
            raise CandidateFailure(verdict, str(failure.get("message", ""))[:8000])
        return reply

    def _timed_inputs(self, values: list[Any], scaled: int,
                      where: str | None = None) -> list[Any]:
        """The inputs a timed call saw: a copy of its set's values (on ``where``, for a set
        moved to the host: ``_offloads``), varied as the runner did."""
        inputs = clone_tree(values, where)
        vary_values(inputs, scaled, self._variation())
        return inputs

    def _variation(self) -> dict[str, Any]:
        """How the runner varies timed inputs for this operator (OperatorSpec.timed_variation)."""
        varied = self.spec.timed_varied_args
        return {"mode": self.spec.timed_variation,
                "args": None if varied is None else list(varied)}

    def _unpack_reply(self, described: dict[str, Any]) -> Any:
        """The tree a reply describes (``tree``), rebuilt from the ``bytes`` it covers in the
        reply arena: copied out once, so what is judged is the judge's own."""
        with self._part("unpack"):
            blob = self.channel.arenas.replies.for_reading(int(described["bytes"]))
            return exchange.unpack(described["tree"], blob, self.device, sent=self._sent)

    def _call(self, inputs: list[Any] | None, *, ghost: bool = False, keep: str | None = None,
              reuse: str | None = None) -> CallOutcome:
        payload = {"op": "call", "ghost": ghost, "keep": keep, "reuse": reuse}
        reply = self._request(payload, inputs=inputs)
        try:
            actual, inputs_after, staged = self._unpack_reply(reply)
            launches = int(reply.get("launches") or 0)
            sites = [str(site)[:300] for site in reply.get("staged_sites") or ()]
            moved = [str(site)[:300] for site in reply.get("moved_sites") or ()][:20]
        except (KeyError, TypeError, ValueError, OSError) as error:
            raise ChannelViolation(f"the runner's reply to a call does not describe its "
                                   f"output: {error}") from None
        if not isinstance(inputs_after, list):
            raise ChannelViolation("the runner's reply to a call does not describe its inputs")
        if not isinstance(staged, list) or not all(isinstance(t, torch.Tensor) for t in staged):
            raise ChannelViolation("the runner's reply to a call does not describe its copies")
        return CallOutcome(actual, inputs_after, launches, staged, sites, moved)

    def _call_with_new_values(self, case: ShapeCase, dtype: str, seed: int, when: str, *,
                              slot: str, inputs: list[Any] | None = None) -> None:
        """A call on the kept tensors (handed over now when ``inputs`` are given), new values
        written into those same tensors, one more call: the first call's answer coming back is
        a stale output, any other wrong answer a wrong output."""
        before = self._call(inputs, keep=slot if inputs is not None else None,
                            reuse=None if inputs is not None else slot).actual
        fresh = self._draw(case, dtype, seed)
        pristine, reference_inputs = self._kept_and_reference_copy(fresh)
        outcome = self._call(fresh, reuse=slot)
        status, message, _ = self._judge(case, dtype, outcome, pristine, reference_inputs)
        if status != verdicts.PASS:
            if status == verdicts.WRONG_OUTPUT and (self.spec.mutated_args
                                                    or _unchanged(outcome.actual, before)):
                # In place, every call moves the state on: no single "before" to compare, so
                # a wrong answer there counts as stale, as it always did.
                status = verdicts.STALE_OUTPUT
            raise CandidateFailure(status, f"{when}, with new values written into the same "
                                   f"input tensors: {message}")

    # -- the judge's own work ------------------------------------------------------------------
    def _draw(self, case: ShapeCase, dtype: str, seed: int) -> list[Any]:
        with self._part("draw"):
            return list(self.spec.make_inputs(InputContext(case, dtype, seed, self.device)))

    def _draw_ahead(self, case: ShapeCase, dtype: str, seed: int) -> None:
        """The host work of a draw about to be made inside a step, done first with no lock
        held: every value drawn, the large ones kept in the judge's draw cache, where the
        step's own draw finds them (on the H100 at e386679 drawing held the steps 0.10 s a
        timed set's hand-over and 0.15 s an after-timing call, every judge about to time
        waiting). The draw then is the same draw: the same generator states, the same values.
        Mostly made already, on the job's draw plan's thread (``_plan_draws``): then this
        waits for it, if it is still under way. Only where other judges share the device: a
        judge alone on it (``NoLock``: one worker, the CPU's default sweep) waits for no one,
        and would draw the small values twice."""
        if isinstance(self.device_lock, NoLock):
            return
        if self._draw_plan is not None and self._draw_plan.wait_for(_draw_key(case, dtype,
                                                                                seed)):
            return
        began = time.perf_counter()
        self._draw_on_meta(case, dtype, seed)
        seconds = time.perf_counter() - began
        self.result.drawn_ahead_s = round(self.result.drawn_ahead_s + seconds, 4)
        self.result.draw_ahead_waited_s = round(self.result.draw_ahead_waited_s + seconds, 4)

    def _draw_on_meta(self, case: ShapeCase, dtype: str, seed: int) -> None:
        """A draw's host work, its tensors on meta (``InputContext.ahead``). An input factory
        that cannot run on meta tensors (it reads a value) stops where it reads: the step
        draws the rest."""
        try:
            self.spec.make_inputs(InputContext(case, dtype, seed, "meta", ahead=True))
        except Exception:  # noqa: BLE001 - a factory that reads values: drawn in the step
            pass

    def _plan_draws(self) -> None:
        """Every draw ``_draw_ahead`` will be asked for, in the order the stages ask: each
        runnable case's trials (shown cases first), each timed case's sets, its call after
        timing. Made on a thread of their own while this job's steps run and wait."""
        if isinstance(self.device_lock, NoLock):
            return
        seeds = self.settings.seeds
        draws = [(case, dtype, seed) for heldout in (False, True)
                 for case, dtype in self.runnable if case.heldout == heldout for seed in seeds]
        if self.settings.timing:
            timed = timed_cases(self.spec, self.backend.quirks)
            draws += [(case, dtype, seed) for case, dtype in timed for seed in TIMING_SEEDS]
            draws += [(case, dtype, AFTER_TIMING_SEED) for case, dtype in timed]
        keys = [_draw_key(*draw) for draw in draws]
        by_key = dict(zip(keys, draws))
        self._draw_plan = DrawPlan(keys, lambda key: self._draw_on_meta(*by_key[key]))

    def _copies(self, inputs: list[Any]) -> tuple[list[Any], list[Any]]:
        """Two copies of ``inputs``: one kept pristine, one for the reference."""
        with self._part("copies"):
            return clone_tree(inputs), clone_tree(inputs)

    def _kept_and_reference_copy(self, inputs: list[Any]) -> tuple[list[Any], list[Any]]:
        """``inputs`` drawn for one call, kept as the pristine set themselves, and a copy for
        the reference. Nothing here writes a drawn set handed to the runner: it is packed into
        the arena, and a reply that names one of its storages gets a copy (exchange.unpack).
        A second copy held one more batch of inputs in the judge's device memory through the
        call; on the H100 at d2f204b the stage of the after-timing calls (a timed case's size,
        its inputs held four times over) set the judges' peak in 24 of 29 jobs, and a job's
        memory decides how many share the device (job_memory.py)."""
        with self._part("copies"):
            return inputs, clone_tree(inputs)

    def _runnable(self) -> list[tuple[ShapeCase, str]]:
        spec, quirks = self.spec, self.backend.quirks
        for case in sorted(spec.cases_in(quirks.case_tiers), key=lambda c: c.heldout):
            for dtype in spec.dtypes:
                if dtype in quirks.skipped_dtypes:
                    self.result.cases.append(TrialRecord(
                        case=case_label(spec, case), tier=case.tier, dtype=dtype,
                        heldout=case.heldout, status="skipped",
                        message=quirks.skipped_dtypes[dtype]).to_dict())
        runnable = runnable_cases(spec, quirks)
        if not runnable:
            raise CandidateFailure(
                verdicts.SKIPPED_UNSUPPORTED,
                f"no case of {spec.id} can run on backend {self.backend.name} (tiers "
                f"{list(quirks.case_tiers)}, skipped dtypes {sorted(quirks.skipped_dtypes)}); "
                f"a check that runs nothing is not a pass")
        return runnable

    def _trials_of(self, case: ShapeCase, dtype: str) -> None:
        for seed in self.settings.seeds:
            self._draw_ahead(case, dtype, seed)
            with self._checking():
                record, actual = self._trial(case, dtype, seed)
            if (record.status == verdicts.WRONG_OUTPUT and actual is not None
                    and _fingerprint(actual) in self.seen_outputs):
                record.status = verdicts.STALE_OUTPUT
                record.message = ("kernel(...) returned an earlier call's output for new "
                                  "inputs: " + record.message)
            if case.heldout and record.status in _FITTING_FAILURES:
                record.message = (f"every shown case passed, but a held-out case failed "
                                  f"({record.status}); its details are withheld so that they "
                                  f"cannot be fitted")
                record.status = verdicts.HELDOUT_FAILED
                record.max_abs_error = record.max_rel_error = None
            self.result.cases.append(record.to_dict())
            if record.status != verdicts.PASS:
                self.result.failing_case = record.to_dict()
                raise CandidateFailure(record.status, record.message)
            if actual is not None:
                self.seen_outputs.add(_fingerprint(actual))

    def _trial(self, case: ShapeCase, dtype: str, seed: int) -> tuple[TrialRecord, Any]:
        inputs = self._draw(case, dtype, seed)
        pristine, reference_inputs = self._kept_and_reference_copy(inputs)
        record = TrialRecord(case=case_label(self.spec, case), tier=case.tier, dtype=dtype,
                             seed=seed, heldout=case.heldout,
                             params=None if case.heldout else dict(case.params))
        try:
            outcome = self._call(inputs)
        except CandidateFailure as failure:
            if failure.verdict not in RUNNER_VERDICTS:
                raise
            record.status, record.message = failure.verdict, failure.message
            return record, None
        record.launches = outcome.launches
        record.status, record.message, comparison = self._judge(case, dtype, outcome, pristine,
                                                                reference_inputs)
        if comparison is not None:
            comparison_tolerance = comparison[1]
            record.tolerance = {"rtol": comparison_tolerance.rtol,
                                "atol": comparison_tolerance.atol}
            record.max_abs_error = comparison[0].max_abs_error
            record.max_rel_error = comparison[0].max_rel_error
        return record, outcome.actual

    def _judge(self, case: ShapeCase, dtype: str, outcome: CallOutcome, pristine: list[Any],
               reference_inputs: list[Any]) -> tuple[str, str, tuple[Comparison, Tolerance] | None]:
        """Aliasing, input mutation and the comparison with the reference."""
        spec = self.spec
        protected = _storages([value for i, value in enumerate(outcome.inputs_after)
                               if i not in spec.mutated_args])
        if _storages(outcome.actual) & protected:  # one storage in the runner is one here
            return (verdicts.OUTPUT_ALIASES_INPUT, "the output shares memory with an input; "
                    f"{spec.id} returns a new tensor", None)
        inputs = _storages(outcome.inputs_after)
        overlap = overlapping([t for t in tensors_in(outcome.actual)
                               if not _storages(t) & inputs])
        if overlap:
            return (verdicts.WRONG_SHAPE_OR_DTYPE, f"{overlap}: {spec.id} returns new tensors, "
                    f"each element its own (not an expanded or overlapping view)", None)
        if spec.contiguous_output:
            for index, tensor in enumerate(tensors_in(outcome.actual)):
                if not tensor.is_contiguous():
                    return (verdicts.WRONG_SHAPE_OR_DTYPE, f"output tensor {index} has strides "
                            f"{tuple(tensor.stride())} for shape {tuple(tensor.shape)}: "
                            f"{spec.id} returns a new contiguous tensor", None)
        if len(outcome.inputs_after) != len(pristine):
            return (verdicts.INPUT_MUTATED, "the arguments came back changed in number", None)
        for index, (now, before) in enumerate(zip(outcome.inputs_after, pristine)):
            if index not in spec.mutated_args and not _unchanged(now, before):
                return (verdicts.INPUT_MUTATED, f"argument {index} was modified, and {spec.id} "
                        f"does not write it", None)
        with self._part("reference and comparison"):
            comparison, tolerance = self._compare_with_reference(case, dtype, outcome,
                                                                 reference_inputs)
        if comparison.ok:
            with self._part("staged copies"):
                staged = self._staged_answer(outcome, pristine, tolerance)
            if staged is not None:
                return verdicts.REFERENCE_USED, staged, (comparison, tolerance)
        return comparison.verdict, comparison.message, (comparison, tolerance)

    def _staged_answer(self, outcome: CallOutcome, pristine: list[Any],
                       tolerance: Tolerance) -> str | None:
        """Why a torch copy made during the call already held an output's answer, or None.

        The runner keeps every copy that rearranged memory (recorder.StagedCopies): staging an
        input, which a kernel may do, or, for an operator that moves data, the answer itself,
        which its Triton kernels then only copied. A copy that matches a correct output within
        the operator's tolerance (values in order, whatever its shape or dtype) is the latter,
        unless that output is itself one of the inputs' values (an operator that is the
        identity on this case: there a staged input cannot be told from the answer) or holds
        one value throughout (any copy of a constant matches it). For an operator that only
        moves data, the runner also names every torch copy that was no input's staging as it
        is (``StagedCopies.moves_data``), which is the operator's work whatever it held."""
        spec = self.spec
        if spec.moves_data and outcome.moved:
            return (f"a torch copy made during kernel(...), {outcome.moved[0]}, moved data. "
                    f"For an operator that only moves data that is the operator's work: "
                    f"torch may stage the inputs as they are (x.contiguous(), a dtype "
                    f"conversion, into a padded buffer), and the Triton kernels must do the "
                    f"moving" + (f" ({len(outcome.moved) - 1} more such copies)"
                                 if len(outcome.moved) > 1 else ""))
        if not outcome.staged:
            return None
        written = [outcome.inputs_after[i] for i in spec.mutated_args
                   if i < len(outcome.inputs_after)]
        given = [t for t in tensors_in(pristine) if t.numel() >= 2]
        # Any size, for an operator that only moves data: there torch may assemble the answer
        # in a buffer of any size (tests/adversarial/cat_staged_in_a_big_buffer.py).
        widest = float("inf") if spec.moves_data else 4
        for index, output in enumerate(tensors_in([outcome.actual, written])):
            if not _varies(output) or any(
                    t.numel() == output.numel() and _holds(t, output, tolerance) for t in given):
                continue
            sites = outcome.staged_sites + ["a torch copy"] * len(outcome.staged)
            for copy, site in zip(outcome.staged, sites):
                if any(_holds(reading, output, tolerance)
                       for reading in _readings(copy, output, widest)):
                    return (f"a torch copy made during kernel(...), {site}, held the "
                            f"answer (output tensor {index}) as it was made: the Triton "
                            f"kernels only moved what torch rearranged. Copies may stage "
                            f"inputs; rearranging them into the answer is the operator's work")
        return None

    def _reference(self, inputs: list[Any], keep: bool = True) -> Any:
        """The operator's reference on ``inputs``, which it may write as the operator does.
        A slow one's answer to the same inputs may come from the judge's kept answers
        (``reference_cache.py``): what it returned, and what it wrote, as it did then.
        ``keep=False``: computed whatever is kept (a call that is made for its own sake)."""
        spec, kept = self.spec, self.references
        key = None
        if keep and kept.keeps(spec.id, spec.reference, spec.host_reference):
            key = kept.key(spec.id, spec.reference, inputs)
            answer = kept.get(key, inputs)
            if answer is not None:
                return answer
        # Host seconds (a device reference's kernels may still run): what a loop costs.
        began = time.perf_counter()
        expected = (self._reference_on_host(inputs) if spec.host_reference
                    else spec.reference(*inputs))
        kept.timed(spec.id, spec.reference, time.perf_counter() - began)
        if key is not None:
            kept.put(key, expected, inputs, list(spec.mutated_args))
        return expected

    def _reference_on_host(self, inputs: list[Any]) -> Any:
        """A host reference (``OperatorSpec.host_reference``) run on host copies of
        ``inputs`` with the device's lock set aside: held shared through it, a Python loop of
        20 s a call kept every judge about to time, and every judge behind it, waiting (40 s
        steps on the H100 at 45f5df4). Its answer, and the arguments it wrote, are put back
        where ``inputs`` live; its seconds are no step's (``_checking`` leaves them out)."""
        on_device = next(iter(tensors_in(list(inputs))), None)
        host = clone_tree(list(inputs), "cpu")
        self.backend.synchronize()
        began, waited = time.perf_counter(), self.device_lock.waited_s
        with self.device_lock.set_aside():
            expected = self.spec.reference(*host)
        self.deadline += self.device_lock.waited_s - waited  # the wait to take it again
        self._aside_s += time.perf_counter() - began
        written = [index for index in self.spec.mutated_args if index < len(inputs)]
        for target, value in zip(tensors_in([inputs[i] for i in written]),
                                 tensors_in([host[i] for i in written])):
            target.copy_(value)
        return expected if on_device is None else clone_tree(expected, on_device.device)

    def _compare_with_reference(self, case: ShapeCase, dtype: str, outcome: CallOutcome,
                                reference_inputs: list[Any]) -> tuple[Comparison, Tolerance]:
        """The reference, run now on its own copy of the inputs, against the return value and
        every argument the operator writes in place."""
        spec = self.spec
        tolerance = spec.tolerance(dtype, case.params)
        actual, inputs = outcome.actual, outcome.inputs_after
        if spec.check_output is not None:  # the problem's own check, run where it may run
            message = spec.check_output(reference_inputs, actual)
            self.backend.synchronize()
            return (Comparison(verdicts.WRONG_OUTPUT, f"the problem's own check: {message}")
                    if message else Comparison()), tolerance
        if spec.product_bound and dtype in BOUNDED_DTYPES and spec.compared is None:
            expected, arguments = bounded_reference(
                lambda *values: self._reference(list(values)), reference_inputs,
                int(spec.reduce_dim(case.params)), spec.mutated_args,
                interleaved=spec.product_bound == "interleaved")
            self.backend.synchronize()
            comparison = compare_outputs(actual, expected, tolerance)
            for index in spec.mutated_args:
                if index < len(inputs):
                    comparison.absorb(compare_outputs(inputs[index], arguments[index], tolerance,
                                                      where=f"argument {index} (written in "
                                                            f"place)"))
            return comparison, tolerance
        if spec.rounding_bound is not None:
            expected = spec.rounding_bound(reference_inputs, tolerance)
            self.backend.synchronize()
            if expected is not None:
                return compare_outputs(actual, expected, tolerance), tolerance
        expected = self._reference(reference_inputs)
        self.backend.synchronize()
        if spec.compared is not None:
            return compare_outputs(spec.compared(actual, inputs),
                                   spec.compared(expected, reference_inputs), tolerance), tolerance
        comparison = compare_outputs(actual, expected, tolerance)
        for index in spec.mutated_args:
            if index < len(inputs):
                comparison.absorb(compare_outputs(inputs[index], reference_inputs[index],
                                                  tolerance,
                                                  where=f"argument {index} (written in place)"))
        return comparison, tolerance



def runnable_cases(spec: OperatorSpec, quirks: Any) -> list[tuple[ShapeCase, str]]:
    """The (case, dtype) pairs the judge runs on a backend with ``quirks``: its tiers' cases in
    every dtype it does not skip, held-out cases last."""
    return [(case, dtype)
            for case in sorted(spec.cases_in(quirks.case_tiers), key=lambda c: c.heldout)
            for dtype in spec.dtypes if dtype not in quirks.skipped_dtypes]


def _draw_key(case: ShapeCase, dtype: str, seed: int) -> tuple[str, str, int]:
    """A draw's name in a job's draw plan (a case's parameters are a mapping: not hashable)."""
    return repr(case), dtype, seed


def probe_pool(spec: OperatorSpec, runnable: Sequence[tuple[ShapeCase, str]]
               ) -> list[tuple[ShapeCase, str]]:
    """The cases a probe draws from (at random, by the judge, unpredictable to the candidate):
    those of ``runnable`` whose inputs hold at least ``PROBE_MIN_ELEMENTS`` elements, since a
    tiny case (a 0-d tensor, say) can leave a cached or kernel-less output right by chance;
    where none is that large, the largest alone. Small tiers first, where they ran."""
    shown = [(c, d) for c, d in runnable if not c.heldout] or list(runnable)
    pool = [(c, d) for c, d in shown if c.tier == SMALL] or shown

    def size(entry: tuple[ShapeCase, str]) -> int:
        inputs = spec.make_inputs(InputContext(entry[0], entry[1], 0, "cpu"))
        return sum(t.numel() for t in tensors_in(list(inputs)))

    sizes = [size(entry) for entry in pool]
    large = [entry for entry, n in zip(pool, sizes) if n >= PROBE_MIN_ELEMENTS]
    return large or [pool[sizes.index(max(sizes))]]


__all__ = ["CandidateFailure", "CheckSettings", "Evaluation", "Stage", "TrialRecord",
           "case_label", "clone_tree", "probe_pool", "runnable_cases"]
