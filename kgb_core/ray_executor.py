"""``kgb run --executor ray``: evaluation workers spread over a Ray cluster.

Ray is the distributed engine; kgb adds no cluster software of its own. One Ray actor per device
of the cluster (the backend's ``ray_resources()``: one GPU for NVIDIA, one CPU for the
interpreter), placed by Ray's resource scheduler; each actor owns one kgb worker process (the
same sandbox as a local run) and evaluates one candidate at a time, so timing runs alone on its
GPU. Ray sets the actor's visible devices (``CUDA_VISIBLE_DEVICES``) from the GPU it assigned,
and the worker inherits them.

The driver (the ``kgb run`` process) keeps the queue, gives each idle actor the next job, and
streams results back as they finish (``ray.wait``); it alone writes the store. When an actor
dies (its node is lost, or it is killed), the candidate it was evaluating is put back at the
front of the queue and evaluated by another actor, and a replacement actor is asked for, which
Ray places wherever a device is free. Each job's future is resolved once, from the one attempt
that answered, so a retried candidate is never recorded twice (and the store's unique key
refuses a second row anyway). A candidate whose evaluation killed ``max_attempts`` actors in a
row is recorded as ``crashed``.

Every node needs the same kgb, plugins, torch and triton installed (``pip install
"kernelgenbench[ray]"``); Ray ships no code to them here.
"""

from __future__ import annotations

import heapq
import itertools
import os
import platform
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kgb_core.errors import UserError
from kgb_core.evaluation import harness_verdicts, verdicts
from kgb_core.evaluation.devices import EvalJob, EvaluationPool, SlotUsage
from kgb_core.evaluation.evaluator import EvaluationSettings
from kgb_core.evaluation.results import EvalResult

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.backends import Backend


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError('--executor ray needs Ray: pip install "kernelgenbench[ray]"') from None
    return ray


class EvaluationActor:
    """Runs inside a Ray worker process: one kgb ``Evaluator`` (and its sandboxed worker)."""

    def __init__(self, backend_name: str, emulates: str, settings: dict[str, Any],
                 slot: str) -> None:
        from kgb_core.evaluation.evaluator import Evaluator
        from kgb_core.plugins import load_registry

        registry = load_registry()
        if emulates:
            from kgb_core.emulation import emulate

            backend = emulate(registry, backend_name, emulates)
        else:
            backend = registry.backend(backend_name)
        self.slot = slot
        self.evaluator = Evaluator.for_backend(backend, EvaluationSettings(**settings),
                                               slot=slot)

    def start(self) -> dict[str, Any]:
        import ray

        info = dict(self.evaluator.start())
        context = ray.get_runtime_context()
        info.update({"slot": self.slot, "host": platform.node(), "actor_pid": os.getpid(),
                     "node_id": context.get_node_id(),
                     "accelerators": {k: list(v) for k, v in
                                      context.get_accelerator_ids().items() if v}})
        return info

    def evaluate(self, op: str, source: str, method: str, sample: int) -> dict[str, Any]:
        return self.evaluator.evaluate(op, source, method=method, sample=sample).to_dict()

    def close(self) -> None:
        self.evaluator.close()


@dataclass(order=True)
class _Job:
    priority: int
    sequence: int
    job: EvalJob = field(compare=False)
    future: "Future[EvalResult]" = field(compare=False)
    attempts: int = field(default=0, compare=False)


@dataclass
class _Actor:
    handle: Any
    usage: SlotUsage
    state: str = "starting"  # starting, idle, busy, dead
    job: _Job | None = None
    started_at: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


def _slots_in(cluster: dict[str, float], resources: dict[str, Any]) -> int:
    """How many actors asking for ``resources`` the cluster's totals hold."""
    wanted: dict[str, float] = {}
    if resources.get("num_gpus"):
        wanted["GPU"] = float(resources["num_gpus"])
    if resources.get("num_cpus"):
        wanted["CPU"] = float(resources["num_cpus"])
    for name, amount in (resources.get("resources") or {}).items():
        wanted[name] = float(amount)
    if not wanted:
        return 1
    return int(min(cluster.get(name, 0.0) // amount for name, amount in wanted.items()))


class RayPool(EvaluationPool):
    """Evaluation actors on a Ray cluster, fed by a dispatcher thread in the driver."""

    def __init__(self, backend: "Backend", settings: EvaluationSettings, *,
                 address: str | None = None, actors: int | None = None,
                 max_attempts: int = 3, placement_timeout_s: float = 900.0) -> None:
        self.backend = backend
        self.settings = settings
        self.address = address
        self.requested_actors = actors
        self.max_attempts = max_attempts
        self.placement_timeout_s = placement_timeout_s
        self._ray: Any = None
        self._owns_ray = False
        self._actor_class: Any = None
        self._actors: list[_Actor] = []
        self._submitted: "queue.Queue[_Job]" = queue.Queue()
        self._sequence = itertools.count()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        self._fatal: BaseException | None = None
        self.replacements = 0
        self.max_replacements = 8

    # -- set-up ----------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {"executor": "ray", "address": self.address or "local",
                "ray": getattr(self._ray, "__version__", None),
                "actor_resources": self.backend.ray_resources()}

    def start(self) -> list[dict[str, Any]]:
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False,
                         log_to_driver=False)
            except (ConnectionError, ValueError, RuntimeError) as error:
                where = self.address or "a local instance"
                raise UserError(f"--executor ray: could not start or join Ray at {where}: "
                                f"{error}") from None
            self._owns_ray = True
        resources = self.backend.ray_resources()
        count = self.requested_actors or _slots_in(ray.cluster_resources(), resources)
        if count < 1:
            raise UserError(f"--executor ray: the cluster has no free {resources} for backend "
                            f"{self.backend.label} (ray.cluster_resources(): "
                            f"{ray.cluster_resources()})")
        self._actor_class = ray.remote(EvaluationActor)
        for _ in range(count):
            self._new_actor()
        try:
            infos = ray.get([actor.handle.start.remote() for actor in self._actors],
                            timeout=max(self.settings.startup_timeout_s, 60) * 2)
        except Exception as error:  # noqa: BLE001 - a worker that cannot start is the user's to fix
            self.close(abort=True)
            raise UserError(f"--executor ray: an evaluation actor failed to start: "
                            f"{_cause(error)}") from None
        for actor, info in zip(self._actors, infos):
            actor.state, actor.info = "idle", info
        self.max_replacements = 2 * count + 8
        self._thread = threading.Thread(target=self._dispatch, daemon=True,
                                        name="kgb-ray-dispatch")
        self._thread.start()
        return infos

    def _new_actor(self) -> _Actor:
        index = len(self._actors)
        slot = f"ray:{index}"
        settings = asdict(self.settings)
        settings["seeds"] = list(settings["seeds"])
        handle = self._actor_class.options(**self.backend.ray_resources(),
                                           max_restarts=0, max_task_retries=0).remote(
            self.backend.name, self.backend.emulates, settings, slot)
        actor = _Actor(handle=handle, usage=SlotUsage(slot=slot, worker_starts=1),
                       started_at=time.monotonic())
        self._actors.append(actor)
        return actor

    # -- the queue -------------------------------------------------------------------------
    def submit(self, job: EvalJob) -> "Future[EvalResult]":
        future: "Future[EvalResult]" = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the evaluation pool is closed")
            if self._fatal is not None:
                future.set_exception(self._fatal)
                return future
            self._submitted.put(_Job(job.priority, next(self._sequence), job, future))
        return future

    def running(self) -> list[tuple[str, Any, EvalJob]]:
        """(slot, actor handle, job) of every job being evaluated now (tests kill actors)."""
        with self._lock:
            return [(a.usage.slot, a.handle, a.job.job) for a in self._actors
                    if a.state == "busy" and a.job is not None]

    def usage(self) -> list[SlotUsage]:
        return [actor.usage for actor in self._actors]

    @property
    def slots(self) -> int:
        return max(1, sum(1 for a in self._actors if a.state != "dead"))

    def _dispatch(self) -> None:
        ray = self._ray
        waiting: list[_Job] = []
        refs: dict[Any, tuple[str, _Actor]] = {}  # object ref -> ("job"|"start", actor)
        try:
            while not self._stopping.is_set():
                while True:
                    try:
                        heapq.heappush(waiting, self._submitted.get_nowait())
                    except queue.Empty:
                        break
                for actor in self._actors:
                    if actor.state == "idle" and waiting:
                        item = heapq.heappop(waiting)
                        if (not item.future.running()  # a retried job already runs
                                and not item.future.set_running_or_notify_cancel()):
                            continue
                        with self._lock:
                            actor.state, actor.job = "busy", item
                        actor.usage.intervals.append((time.monotonic(), float("nan")))
                        job = item.job
                        refs[actor.handle.evaluate.remote(job.op, job.source, job.method,
                                                          job.sample)] = ("job", actor)
                if not refs:
                    try:
                        heapq.heappush(waiting, self._submitted.get(timeout=0.2))
                    except queue.Empty:
                        pass
                    continue
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.2)
                for ref in ready:
                    kind, actor = refs.pop(ref)
                    self._collect(ref, kind, actor, waiting, refs)
                self._check_placement(waiting)
        except BaseException as error:  # noqa: BLE001 - every waiting future must hear of it
            self._fail_everything(error, waiting)

    def _collect(self, ref: Any, kind: str, actor: _Actor, waiting: list[_Job],
                 refs: dict[Any, tuple[str, _Actor]]) -> None:
        ray = self._ray
        try:
            value = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnschedulableError):
            self._actor_died(actor, waiting, refs)
            return
        except ray.exceptions.RayTaskError as error:
            raise UserError(f"--executor ray: an evaluation actor failed: {_cause(error)}") from None
        if kind == "start":
            actor.state, actor.info = "idle", value
            return
        item = actor.job
        assert item is not None
        result = EvalResult.from_dict(value)
        self._account(actor)
        with self._lock:
            actor.state, actor.job = "idle", None
        item.future.set_result(result)

    def _account(self, actor: _Actor) -> None:
        started, _ = actor.usage.intervals[-1]
        ended = time.monotonic()
        actor.usage.intervals[-1] = (started, ended)
        actor.usage.busy_s += ended - started
        actor.usage.jobs += 1

    def _actor_died(self, actor: _Actor, waiting: list[_Job],
                    refs: dict[Any, tuple[str, _Actor]]) -> None:
        with self._lock:
            item, actor.state, actor.job = actor.job, "dead", None
        try:  # unavailable may yet mean alive: make sure it never times next to its successor
            self._ray.kill(actor.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        if item is not None:
            self._account(actor)
            actor.usage.jobs -= 1  # not done: lost
            actor.usage.lost += 1
            item.attempts += 1
            if item.attempts >= self.max_attempts:
                job = item.job
                lost = EvalResult(op=job.op, backend=self.backend.name,
                                  emulates=self.backend.emulates, verdict=verdicts.CRASHED,
                                  method=job.method, sample=job.sample,
                                  evaluated_on=actor.usage.slot)
                item.future.set_result(harness_verdicts.died(
                    lost, f"{item.attempts} Ray evaluation actors died while evaluating this "
                          f"candidate; it was not tried again", None))
            else:
                # Back to the front of its priority (its sequence number is kept).
                heapq.heappush(waiting, item)
        if self._stopping.is_set():
            return
        if self.replacements >= self.max_replacements:
            raise UserError(f"--executor ray: {self.replacements} evaluation actors were "
                            f"replaced and the last died too; see the Ray logs "
                            f"(/tmp/ray/session_latest/logs)")
        # Ray places the replacement on any node with a free device, another node when this
        # one is gone.
        replacement = self._new_actor()
        self.replacements += 1
        refs[replacement.handle.start.remote()] = ("start", replacement)

    def _check_placement(self, waiting: list[_Job]) -> None:
        """Fail the sweep, rather than wait for ever, when no actor is left and none can be
        placed (every node with a device is gone)."""
        live = [a for a in self._actors if a.state in ("idle", "busy")]
        if live or not waiting:
            return
        starting = [a for a in self._actors if a.state == "starting"]
        if starting and min(time.monotonic() - a.started_at for a in starting) \
                < self.placement_timeout_s:
            return
        raise UserError(f"--executor ray: no evaluation actor is alive and none could be "
                        f"placed within {self.placement_timeout_s:g} s (the cluster has no "
                        f"free {self.backend.ray_resources()}); resume the sweep later with "
                        f"--resume")

    def _fail_everything(self, error: BaseException, waiting: list[_Job]) -> None:
        with self._lock:
            self._fatal = error
            items = list(waiting) + [a.job for a in self._actors if a.job is not None]
        while True:
            try:
                items.append(self._submitted.get_nowait())
            except queue.Empty:
                break
        for item in items:
            if not item.future.done():
                item.future.set_exception(error)

    # -- tear-down -------------------------------------------------------------------------
    def close(self, abort: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        ray = self._ray
        if ray is None:
            return
        alive = [a for a in self._actors if a.state != "dead"]
        if not abort and alive:
            try:  # each actor stops its kgb worker before it goes
                ray.get([a.handle.close.remote() for a in alive if a.state == "idle"],
                        timeout=30)
            except Exception:  # noqa: BLE001 - the kill below ends them either way
                pass
        for actor in alive:
            try:
                ray.kill(actor.handle, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        if self._owns_ray:
            ray.shutdown()


def _cause(error: BaseException) -> str:
    cause = getattr(error, "cause", None)
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
