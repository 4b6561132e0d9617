"""A sweep: operators x one method x one backend, every result stored as it finishes.

Generation and evaluation are decoupled through a queue (docs/scale-out.md): methods run in
``concurrency`` threads, their candidates are evaluated by one worker per device, and the
calling thread alone writes the store.

The plan (what to run) is resolved and checked before anything starts, so a typo in an
operator name fails in a second, not after an hour. With ``resume`` the latest run with the
same plan is continued and every (op, backend, method, sample) already stored is skipped.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kgb_core.backends import Backend
from kgb_core.candidates import Candidate
from kgb_core.config import RunConfig, validate_method_options
from kgb_core.environment import describe_environment
from kgb_core.errors import UserError
from kgb_core.evaluation import harness_verdicts, sandbox, verdicts
from kgb_core.evaluation.baselines import now as baseline_now
from kgb_core.evaluation.devices import (AGENT_TURN, FINAL, DevicePool, EvalJob,
                                         EvaluationPool, SlotUsage,
                                         check_workers_per_device, parse_devices)
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.evaluation.job_memory import JobMemory
from kgb_core.evaluation.peak_store import PeakStore
from kgb_core.evaluation.results import EvalResult
from kgb_core.methods import GenerationContext, Method
from kgb_core.operators import OperatorSpec
from kgb_core.plugins import Registry
from kgb_core.progress import Progress
from kgb_core.source_options import configure as configure_sources
from kgb_core.store import ResultKey, ResultStore, read_answer

@dataclass
class SweepPlan:
    config: RunConfig
    operators: list[OperatorSpec]
    method: Method
    backend: Backend
    backend_note: str = ""
    devices: list[int] | None = None  # local executor: the devices to pin workers to

    def describe(self) -> dict[str, Any]:
        """What identifies this run for --resume: the work asked for, not where results go."""
        return {
            "operators": [op.id for op in self.operators],
            "method": self.method.name,
            "method_options": self.config.method_options,
            "backend": self.backend.name,
            "seeds": list(self.config.seeds),
            "timing": self.config.timing,
            "timing_settings": self.config.timing_settings,
            # Only when set, so that the plan keys of runs made before emulation existed are
            # unchanged and --resume still finds them.
            **({"emulates": self.backend.emulates} if self.backend.emulates else {}),
            # A label given outright; a derived one follows from the rest (plan_label).
            **({"label": self.config.method_label} if self.config.method_label else {}),
            # Only when set: the operators of a source with options depend on them.
            **({"source_options": self.config.source_options}
               if self.config.source_options else {}),
        }

    @property
    def label(self) -> str:
        """The method's label in the store and the report (kgb_core/labels.py)."""
        return self.config.method_label or self.method.label(self.config.method_options)


@dataclass
class SweepOutcome:
    run_id: int
    resumed: bool
    evaluated: int = 0
    skipped_done: int = 0
    results: list[EvalResult] = field(default_factory=list)
    stopped_by_budget: str = ""
    wall_s: float = 0.0
    usage: list[SlotUsage] = field(default_factory=list)  # per device slot


def _over_budget(config: RunConfig, store: ResultStore, run_id: int,
                 unrecorded: tuple[int, float] = (0, 0.0)) -> str:
    """What the run has spent, when that reaches its budget; empty while it does not.

    ``unrecorded``: tokens and dollars of candidates generated but not yet evaluated and
    stored, which are spent all the same."""
    if config.token_budget is None and config.cost_budget_usd is None:
        return ""
    tokens, cost = store.run_usage(run_id)
    tokens, cost = tokens + unrecorded[0], cost + unrecorded[1]
    if config.token_budget is not None and tokens >= config.token_budget:
        return f"{tokens} tokens of a {config.token_budget}-token budget"
    if config.cost_budget_usd is not None and cost >= config.cost_budget_usd:
        return f"${cost:.4f} of a ${config.cost_budget_usd:g} budget"
    return ""


def resolve_backend(registry: Registry, name: str | None,
                    emulate: str | None = None) -> tuple[Backend, str]:
    """The backend asked for (which must be available), or the auto-detected one, with why.

    With ``emulate`` the result is that backend (the fallback, the CPU interpreter, unless
    another is named) running with the quirks of the backend ``emulate`` names
    (``kgb_core.emulation``).
    """
    if emulate:
        from kgb_core.emulation import emulate as make_emulating

        host_name = name or registry.fallback_backend().name
        backend = make_emulating(registry, host_name, emulate)
        availability = backend.safe_probe()
        if not availability.available:
            raise UserError(f"backend {host_name!r} is not available here: {availability.reason}")
        note = (f"backend: {backend.label}: {emulate}'s quirks applied to {host_name}; results "
                f"are labelled as emulation and are no {emulate} hardware results")
        return backend, note
    if name:
        backend = registry.backend(name)
        availability = backend.safe_probe()
        if not availability.available:
            raise UserError(f"backend {name!r} is not available here: {availability.reason} "
                            f"(`kgb doctor --backend {name}` shows what was probed)")
        return backend, ""
    available, reasons = [], []
    for backend in registry.backends():
        if backend.fallback or not backend.auto_detect:
            continue
        availability = backend.safe_probe()
        (available if availability.available else reasons).append(
            (backend, availability.reason))
    if len(available) > 1:
        names = ", ".join(b.name for b, _ in available)
        raise UserError(f"several backends are available ({names}); choose one with --backend")
    if available:
        backend, reason = available[0]
        return backend, f"backend: picked {backend.name!r} ({reason}); pass --backend to choose"
    fallback = registry.fallback_backend()
    why = "; ".join(f"{b.name}: {r}" for b, r in reasons) or "no GPU backend installed"
    return fallback, (f"backend: picked {fallback.name!r}, the fallback ({fallback.description}), "
                      f"because no GPU backend is available ({why})")


def plan_sweep(config: RunConfig, registry: Registry) -> SweepPlan:
    check_workers_per_device(config.workers_per_device)
    configure_sources(registry, config.source_options)
    method = registry.method(config.method) if config.method else registry.default_method()
    config.method = method.name
    validate_method_options(config, method)
    backend, note = resolve_backend(registry, config.backend, config.emulate)
    operators: list[OperatorSpec] = []
    if config.ops:
        operators = [registry.operator(op_id) for op_id in config.ops]
        if config.sources:
            outside = [op.id for op in operators if op.source not in config.sources]
            if outside:
                raise UserError(f"operators {outside} are not in the sources {config.sources}")
    else:
        operators = registry.operators(config.sources, config.tags)
    if config.tags:
        operators = [op for op in operators if set(config.tags) <= op.tags]
    if not operators:
        raise UserError("the selection matches no operator (check --source/--op/--tag; "
                        "`kgb ops` lists them)")
    unique = list({op.id: op for op in operators}.values())
    if config.executor == "ray":
        if config.devices not in (None, "all"):
            raise UserError("--devices with --executor ray: Ray places one worker on each "
                            "device of the cluster; leave out --devices (or give all)")
        if config.workers_per_device > 1:
            # Ray would need fractional device resources per actor (num_gpus=1/N), which
            # kgb does not ask for; the local executor does this.
            raise UserError("--workers-per-device with --executor ray: Ray places one actor "
                            "on each device; use the local executor (--devices) for several "
                            "workers per device")
        devices = None
    else:
        devices = parse_devices(config.devices, backend)
    return SweepPlan(config=config, operators=unique, method=method, backend=backend,
                     backend_note=note, devices=devices)


def evaluation_settings(config: RunConfig, backend: Backend | None = None) -> EvaluationSettings:
    """What the judges are told; ``backend`` decides where baselines are stored by default."""
    baselines = stored_baselines(config, backend)
    return EvaluationSettings(seeds=tuple(config.seeds), timeout_s=config.timeout_s,
                              timing=config.timing, timing_settings=dict(config.timing_settings),
                              worker_reuse=config.worker_reuse,
                              hidden_paths=(str(Path(config.db).resolve()),),
                              source_options=config.source_options,
                              baselines=baselines,
                              retime_baselines_before=baseline_now()
                              if baselines and config.retime_baselines else "",
                              timing_gather_s=config.timing_gather_s)


def default_baselines_file() -> Path:
    """The machine's stored baselines: ``$XDG_CACHE_HOME/kgb`` (``~/.cache/kgb``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "kgb" / "baselines.sqlite"


def stored_baselines(config: RunConfig, backend: Backend | None) -> str | None:
    """The baselines file of a run, or None where none is kept: timing off, ``none`` asked,
    or by default a backend whose timings measure no chip (the interpreter's seconds are not
    worth keeping, and tests stay independent of each other)."""
    if not config.timing or config.baselines == "none":
        return None
    if config.baselines:
        return str(Path(config.baselines).expanduser().resolve())
    if backend is not None and backend.timings_measure_hardware:
        return str(default_baselines_file())
    return None


def make_pool(plan: SweepPlan) -> EvaluationPool:
    """The evaluation pool the plan's config asks for: local workers per device, or Ray."""
    config = plan.config
    settings = evaluation_settings(config, plan.backend)
    if config.executor == "ray":
        from kgb_core.ray_executor import RayPool

        return RayPool(plan.backend, settings, address=config.ray_address)
    specs = {spec.id: spec for spec in plan.operators}
    # Each job's device bytes, for a device its workers share (job_memory.py); a device that
    # does not say its size (the CPU) ignores them. Jobs' peaks are kept beside the stored
    # baselines, for the machine's later sweeps (peak_store.py).
    peaks = PeakStore(settings.baselines, plan.backend.name) if settings.baselines else None
    memory = JobMemory(specs.get, plan.backend.quirks, store=peaks)
    return DevicePool(plan.backend, settings, plan.devices,
                      workers_per_device=config.workers_per_device, memory=memory)


def run_sweep(plan: SweepPlan, registry: Registry, store: ResultStore, *, resume: bool,
              progress_factory: Callable[[int], Progress] = Progress,
              notes: Callable[[str], None] = lambda message: None,
              pool: EvaluationPool | None = None,
              stop_at: float | None = None) -> SweepOutcome:
    """Generate and evaluate every pending (operator, sample), storing each result at once.

    Generation runs in ``config.concurrency`` threads; what they make goes to the evaluation
    pool's queue (one worker per device), so candidates are generated while others are timed.
    This thread alone writes the store: results, and the answers the methods cache, reach it
    as events. A ``pool`` given is used instead of the one the config describes (tests).
    ``stop_at`` (``time.monotonic()``): no operator is started after it; those running finish
    and are stored, and the run stays open for ``--resume``, as when a budget is reached.
    """
    description = plan.describe()
    run_id = store.latest_run_for(description) if resume else None
    done: set[ResultKey] = store.done_keys(run_id) if run_id is not None else set()
    if resume and run_id is None:
        notes("resume: no earlier run with this plan in the store; starting a new run")
    samples = plan.method.samples(plan.config.method_options)
    denied = plan.backend.quirks.denied_operators
    pending = [op for op in plan.operators
               if any(ResultKey(op.id, plan.backend.name, plan.method.name, sample) not in done
                      for sample in range(1 if op.id in denied else samples))]
    if run_id is not None and not pending:
        # A resumed run with nothing left: no judge to start (seconds, for nothing).
        notes(f"resume: run {run_id} is complete; all {len(plan.operators)} operators already "
              f"done")
        if not any(run["id"] == run_id and run["finished_at"] for run in store.runs()):
            store.finish_run(run_id)  # killed after its last result, before it was marked
        return SweepOutcome(run_id=run_id, resumed=True, skipped_done=len(plan.operators))
    pool = pool if pool is not None else make_pool(plan)
    with pool:
        worker_infos = pool.start()
        unsandboxed = [info for info in worker_infos if info.get("sandbox") == sandbox.NONE]
        if unsandboxed:  # once per sweep, whatever the number of workers
            notes(sandbox.warning(sandbox.SandboxTool(sandbox.NONE,
                                                      unsandboxed[0].get("sandbox_detail", ""))))
        if run_id is None:
            environment = describe_environment(registry, worker_infos[0])
            # Whether the method's candidates are known-good code (Method.trusted): the report
            # shows generated candidates' sources, not the shipped kernels'.
            environment["method_trusted"] = plan.method.trusted
            environment["evaluation"] = {
                **pool.describe(), "concurrency": plan.config.concurrency,
                "workers": [{key: info.get(key) for key in
                             ("slot", "device_index", "device", "device_name", "host",
                              "sandbox", "sandbox_detail")}
                            for info in worker_infos]}
            run_id = store.start_run(description, environment, label=plan.label)
        else:
            notes(f"resume: continuing run {run_id}; {len(plan.operators) - len(pending)} "
                  f"operators already done")
        outcome = SweepOutcome(run_id=run_id, resumed=bool(done),
                               skipped_done=len(plan.operators) - len(pending))
        started = time.monotonic()
        _Pipeline(plan, pool, store, run_id, done, outcome, progress_factory(len(pending)),
                  notes, stop_at).run(pending)
        outcome.wall_s = time.monotonic() - started
        outcome.usage = pool.usage()
    if not outcome.stopped_by_budget:
        store.finish_run(run_id)
    return outcome


class _ForwardingCache:
    """The response cache as generation threads see it: reads through a connection of their
    own, writes sent to the store's thread as events (committed there at once); an answer
    put but not yet committed is served from memory."""

    def __init__(self, path: Any, events: "queue.Queue[tuple[Any, ...]]") -> None:
        self._path = str(path)
        self._events = events
        self._local = threading.local()
        self._unwritten: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if key in self._unwritten:
                return self._unwritten[key]
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = sqlite3.connect(self._path, timeout=30)
        return read_answer(conn, key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._unwritten[key] = value
        self._events.put(("put", key, value))

    def written(self, key: str) -> None:
        with self._lock:
            self._unwritten.pop(key, None)


class _Pipeline:
    """One sweep's scheduling: generation threads, evaluation futures, and the store's thread
    (the caller's) consuming their events."""

    def __init__(self, plan: SweepPlan, pool: EvaluationPool, store: ResultStore, run_id: int,
                 done: set[ResultKey], outcome: SweepOutcome, progress: Progress,
                 notes: Callable[[str], None], stop_at: float | None = None) -> None:
        self.plan, self.pool, self.store, self.run_id = plan, pool, store, run_id
        self.stop_at = stop_at
        self.done, self.outcome, self.progress, self.notes = done, outcome, progress, notes
        self.events: "queue.Queue[tuple[Any, ...]]" = queue.Queue()
        self.cache = _ForwardingCache(store.path, self.events)
        self.concurrency = plan.config.concurrency
        # Generation runs ahead of evaluation by at most this many candidates waiting in the
        # queue: enough to keep every device busy, bounded so that a fast method does not
        # generate the whole sweep into memory first.
        self.backlog_limit = 2 * max(1, pool.slots) + self.concurrency
        self.generating = 0
        self.waiting: dict[str, int] = {}  # op id -> its candidates not yet evaluated
        self.op_results: dict[str, list[EvalResult]] = {}
        self.unrecorded_tokens, self.unrecorded_cost = 0, 0.0
        self.jobs = _GenerationThreads(self.concurrency)

    def run(self, pending: list[OperatorSpec]) -> None:
        todo = deque(pending)
        try:
            while True:
                while (todo and not self.outcome.stopped_by_budget
                       and self.generating < self.concurrency
                       and sum(self.waiting.values()) < self.backlog_limit):
                    spent = _over_budget(self.plan.config, self.store, self.run_id,
                                         (self.unrecorded_tokens, self.unrecorded_cost))
                    if spent:
                        self.outcome.stopped_by_budget = (
                            f"budget reached ({spent}); {len(todo)} operators not attempted; "
                            f"raise the budget and run again with --resume")
                    elif self.stop_at is not None and time.monotonic() >= self.stop_at:
                        self.outcome.stopped_by_budget = (
                            f"time limit reached; {len(todo)} operators not attempted; run "
                            f"again with --resume")
                    if self.outcome.stopped_by_budget:
                        self.notes(self.outcome.stopped_by_budget)
                        break
                    self._start(todo.popleft())
                if not self.generating and not self.waiting and (
                        not todo or self.outcome.stopped_by_budget):
                    return
                self._handle(self.events.get())
        finally:
            self.jobs.stop()

    def _start(self, op: OperatorSpec) -> None:
        backend, method = self.plan.backend, self.plan.method
        reason = backend.quirks.denied_operators.get(op.id)
        if reason is not None:  # known not to run there: no prompt, no candidate, no verdict
            result = harness_verdicts.denied(op.id, backend.name, backend.label,
                                             backend.emulates, reason, method.name)
            self._record(op, result, None)
            self.op_results[op.id] = [result]
            self._finish(op)
            return
        self.generating += 1
        self.waiting[op.id] = 0
        self.op_results[op.id] = []
        self.jobs.submit(lambda: self._generate(op))

    def _generate(self, op: OperatorSpec) -> None:
        """In a generation thread: the method's candidates, or why there are none."""
        backend, method = self.plan.backend, self.plan.method

        def evaluate(source: str) -> EvalResult:  # an agent's turn: first in the queue
            return self.pool.submit(EvalJob(op.id, source, method.name, -1,
                                            priority=AGENT_TURN)).result()

        context = GenerationContext(
            options=self.plan.config.method_options, backend_name=backend.name,
            emulates=backend.emulates, evaluate=evaluate, cache=self.cache,
            log=lambda message: self.events.put(("note", message)),
            source_options=self.plan.config.source_options)
        try:
            candidates = method.generate(op, backend.quirks, context)
        except UserError as error:
            self.events.put(("fatal", error))
            return
        except BaseException as error:  # a method failing on one op must not end the sweep
            self.events.put(("generated", op, [],
                             f"method {method.name!r} failed: {type(error).__name__}: {error}"))
            return
        self.events.put(("generated", op, candidates,
                         f"method {method.name!r} produced no candidate for {op.id}"))

    def _handle(self, event: tuple[Any, ...]) -> None:
        kind = event[0]
        if kind == "put":
            _, key, value = event
            self.store.cache_answer(key, value)
            self.cache.written(key)
        elif kind == "fatal":
            raise event[1]
        elif kind == "note":  # a method's word to the user, from a generation thread
            self.notes(event[1])
        elif kind == "generated":
            _, op, candidates, failure = event
            self.generating -= 1
            self._generated(op, candidates, failure)
        elif kind == "evaluated":
            _, op, candidate, future = event
            self.waiting[op.id] -= 1
            result = future.result()  # a pool that fails raises here, ending the sweep
            self._record(op, result, candidate)
            self.unrecorded_tokens -= _tokens(candidate)
            self.unrecorded_cost -= candidate.cost_usd or 0.0
            self.op_results[op.id].append(result)
            if not self.waiting[op.id]:
                self._finish(op)

    def _generated(self, op: OperatorSpec, candidates: list[Candidate], failure: str) -> None:
        backend, method = self.plan.backend, self.plan.method
        if not candidates:
            result = EvalResult(op=op.id, backend=backend.name, emulates=backend.emulates,
                                verdict=verdicts.NO_CANDIDATE, message=failure,
                                method=method.name, sample=0)
            self._record(op, result, None)
            self.op_results[op.id].append(result)
            self._finish(op)
            return
        # Queued together, so that the pool keeps them on one judge (job_queue.py).
        left = [candidate for candidate in candidates
                if ResultKey(op.id, backend.name, method.name, candidate.sample) not in self.done]
        futures = self.pool.submit_all([EvalJob(op.id, candidate.source, method.name,
                                                candidate.sample, priority=FINAL)
                                        for candidate in left])
        for candidate, future in zip(left, futures):
            self.waiting[op.id] += 1
            self.unrecorded_tokens += _tokens(candidate)
            self.unrecorded_cost += candidate.cost_usd or 0.0
            future.add_done_callback(
                lambda f, op=op, c=candidate: self.events.put(("evaluated", op, c, f)))
        if not self.waiting[op.id]:
            self._finish(op)

    def _record(self, op: OperatorSpec, result: EvalResult, candidate: Candidate | None) -> None:
        self.store.record(self.run_id, op.source, result, candidate)
        self.outcome.results.append(result)
        self.outcome.evaluated += 1
        if candidate is not None:
            self.plan.method.evaluated(candidate, result, self.plan.config.method_options)

    def _finish(self, op: OperatorSpec) -> None:
        self.waiting.pop(op.id, None)
        results = self.op_results.pop(op.id, [])
        passed = any(r.passed for r in results)
        verdict = verdicts.PASS if passed else (results[-1].verdict if results else "done")
        self.progress.advance(op.id, verdict, passed=passed)


def _tokens(candidate: Candidate) -> int:
    return (candidate.prompt_tokens or 0) + (candidate.completion_tokens or 0)


class _GenerationThreads:
    """A fixed number of daemon threads running generation jobs: daemons, so that a sweep
    stopped by an error or ^C does not wait for a model that takes minutes to answer."""

    def __init__(self, count: int) -> None:
        self._jobs: "queue.Queue[Callable[[], None] | None]" = queue.Queue()
        self._threads = [threading.Thread(target=self._serve, daemon=True,
                                          name=f"kgb-generate-{i}") for i in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()

    def stop(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)


def evaluate_file(registry: Registry, op_id: str, source: str, backend: Backend,
                  settings: EvaluationSettings) -> EvalResult:
    """One candidate, one operator: what ``kgb eval`` does."""
    registry.operator(op_id)  # an unknown op fails here, before a worker starts
    with Evaluator.for_backend(backend, settings) as evaluator:
        return evaluator.evaluate(op_id, source, method="file")

