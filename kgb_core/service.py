"""kgb as a function: evaluations on demand, for a training loop's reward or a service.

``EvaluationService`` keeps the sweep's evaluation pools (``kgb_core.evaluation.devices``) open
between calls, so a candidate costs a fresh sandboxed runner, not a judge start: one pool of
correctness-only workers (several per device: checks overlap on the host's cores) and one
timing pool with one worker per device (a timed candidate has its device to itself). Each pool
starts on its first request. On a GPU the judges share the device's lock
(``kgb_core/evaluation/device_lock.py``): checks go on beside a timed candidate, which has the
device to itself for each of its timings; where there is no lock (the interpreter) the pools
share a gate per device, and a timed candidate runs with no check beside it at all. Everything the CLI's checks do, this does: the same judge, the
same verdicts, the same ``EvalResult`` that ``kgb eval --json`` prints.

``kgb_core.evaluate`` and ``kgb_core.evaluate_many`` (lazy names on the package: importing
``kgb_core`` imports no torch) use one service per backend for the life of the process.
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from kgb_core.errors import UserError
from kgb_core.evaluation.devices import DevicePool, EvalJob, device_gates
from kgb_core.evaluation.evaluator import EvaluationSettings
from kgb_core.evaluation.results import EvalResult

# The method name results made here carry (``EvalResult.method``), as ``kgb eval``'s carry
# "file".
METHOD = "api"
# Correctness-only workers per device: their compiles and checks overlap.
CHECK_WORKERS_PER_DEVICE = 2


@dataclass(frozen=True)
class EvalRequest:
    """One candidate for one operator: what ``evaluate`` takes, and a service request holds."""

    op: str
    source: str
    timing: bool = True
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op:
            raise UserError("an evaluation needs the operator's id, e.g. aten.softmax")
        if "." not in self.op:
            raise UserError(f"an operator id looks like <source>.<name> (aten.softmax), not "
                            f"{self.op!r}")
        if not isinstance(self.source, str):
            raise UserError("an evaluation needs the candidate's source as a string")
        if not isinstance(self.timing, bool):
            raise UserError("'timing' must be true or false")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or self.seed < 0):
            raise UserError(f"seed must be a non-negative integer, not {self.seed!r}")


class EvaluationService:
    """Evaluations on demand on one backend, over pools kept open between calls.

    ``submit`` returns a future at once; ``evaluate`` and ``evaluate_many`` wait. Thread-safe:
    a service answering several clients submits from their threads.
    """

    def __init__(self, backend: str | None = None, *, registry: Any = None,
                 emulate: str | None = None, devices: Sequence[int] | str | None = None,
                 check_workers_per_device: int = CHECK_WORKERS_PER_DEVICE,
                 timeout_s: float | None = None, seeds: Sequence[int] | None = None,
                 hidden_paths: Sequence[str] = ()) -> None:
        from kgb_core.config import RunConfig
        from kgb_core.plugins import load_registry
        from kgb_core.sweep import resolve_backend

        self.registry = registry if registry is not None else load_registry()
        self.backend, self.note = resolve_backend(self.registry, backend, emulate)
        defaults = RunConfig()
        self.settings = EvaluationSettings(
            seeds=tuple(seeds if seeds is not None else defaults.seeds),
            timeout_s=float(timeout_s if timeout_s is not None else defaults.timeout_s),
            hidden_paths=tuple(hidden_paths))
        if isinstance(devices, str):  # as --devices takes it: "all", "0,1", "0-3"
            from kgb_core.evaluation.devices import parse_devices

            devices = parse_devices(devices, self.backend)
        self.devices = list(devices) if devices else None
        self.check_workers_per_device = max(1, int(check_workers_per_device))
        # Both pools run on the same devices. Without the device's lock, a timed candidate
        # waits at this gate for the checks running there to end, and none starts until it is
        # done (its timings are the device's alone); with it, the lock does that per timing.
        self._gates = device_gates(self.devices or [None])
        self._pools: dict[bool, DevicePool] = {}
        self._lock = threading.Lock()
        self._closed = False

    # -- what a caller uses ----------------------------------------------------------------
    def operators(self) -> list[str]:
        """The ids of every operator the installed sources offer."""
        return sorted(spec.id for spec in self.registry.operators())

    def submit(self, request: EvalRequest) -> "Future[EvalResult]":
        """Queue one evaluation; an unknown operator is refused here, before any work."""
        self.registry.operator(request.op)  # raises UserError for an unknown id
        job = EvalJob(op=request.op, source=request.source, method=METHOD,
                      seeds=None if request.seed is None else (request.seed,))
        return self._pool(request.timing).submit(job)

    def evaluate(self, source: str, op: str, *, timing: bool = True,
                 seed: int | None = None) -> EvalResult:
        return self.submit(EvalRequest(op, source, timing, seed)).result()

    def evaluate_many(self, requests: Iterable[EvalRequest]) -> list[EvalResult]:
        """Every request queued at once (they spread over the pool's workers), results in the
        order asked."""
        futures = [self.submit(request) for request in requests]
        return [future.result() for future in futures]

    def slots(self, timing: bool) -> int:
        """How many candidates of this kind run at once."""
        devices = len(self.devices or [None])
        return devices * (1 if timing else self.check_workers_per_device)

    def usage(self) -> dict[str, list[dict[str, Any]]]:
        """What each started pool's workers did (jobs, busy seconds, judge starts, jobs run
        again with the device alone after running out of memory): ``checks`` and ``timings``."""
        with self._lock:
            pools = dict(self._pools)
        return {("timings" if timing else "checks"): [slot.to_dict() for slot in pool.usage()]
                for timing, pool in sorted(pools.items())}

    # -- pools -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start both pools now rather than on their first request (a server does)."""
        for timing in (False, True):
            self._pool(timing)

    def _pool(self, timing: bool) -> DevicePool:
        with self._lock:
            if self._closed:
                raise RuntimeError("the evaluation service is closed")
            pool = self._pools.get(timing)
            if pool is None:
                settings = dataclasses.replace(self.settings, timing=timing)
                pool = DevicePool(self.backend, settings, self.devices,
                                  workers_per_device=1 if timing
                                  else self.check_workers_per_device, gates=self._gates)
                pool.start()
                self._pools[timing] = pool
            return pool

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()

    def __enter__(self) -> "EvaluationService":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- the module-level functions: one service per backend, for the process's life ------------
_SERVICES: dict[str | None, EvaluationService] = {}
_SERVICES_LOCK = threading.Lock()


def _service(backend: str | None) -> EvaluationService:
    with _SERVICES_LOCK:
        service = _SERVICES.get(backend)
        if service is None:
            service = _SERVICES[backend] = EvaluationService(backend)
        return service


def evaluate(source: str, op: str, *, backend: str | None = None, timing: bool = True,
             seed: int | None = None) -> EvalResult:
    """Evaluate one candidate (``source``, a Python file's text defining ``kernel``) against
    operator ``op``: the verdict, message, failing case, speedup and timings, as ``kgb eval
    --json`` gives them. The first call on a backend starts its judges (seconds); later calls
    reuse them."""
    return _service(backend).evaluate(source, op, timing=timing, seed=seed)


def evaluate_many(requests: Iterable[EvalRequest | tuple[str, str] | dict[str, Any]], *,
                  backend: str | None = None) -> list[EvalResult]:
    """Several candidates at once over the same workers: each request an ``EvalRequest``, an
    ``(op, source)`` pair, or a dict of ``EvalRequest``'s fields."""
    return _service(backend).evaluate_many(as_request(item) for item in requests)


def as_request(item: EvalRequest | tuple[str, str] | dict[str, Any]) -> EvalRequest:
    if isinstance(item, EvalRequest):
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return EvalRequest(op=item[0], source=item[1])
    if isinstance(item, dict):
        unknown = set(item) - set(EvalRequest.__dataclass_fields__)
        if unknown:
            raise UserError(f"unknown field(s) in an evaluation request: {sorted(unknown)}")
        return EvalRequest(**{"op": None, "source": None, **item})  # a missing one: said so
    raise UserError(f"an evaluation request is an EvalRequest, an (op, source) pair or a dict, "
                    f"not {type(item).__name__}")


def close_all() -> None:
    """Close the module-level services (at exit, or by a caller done evaluating)."""
    with _SERVICES_LOCK:
        services = list(_SERVICES.values())
        _SERVICES.clear()
    for service in services:
        service.close()


atexit.register(close_all)
