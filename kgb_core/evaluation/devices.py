"""Evaluation workers per device, fed from one queue.

A sweep hands every candidate to an ``EvaluationPool`` and gets a future back. The local pool
keeps one long-lived ``Evaluator`` (one worker process) per device slot, pinned to its device
through ``Backend.device_environment`` (``CUDA_VISIBLE_DEVICES=1`` for NVIDIA); one thread per
slot takes the next job from a shared priority queue and runs it to completion before it takes
another. So a device evaluates one candidate at a time: two timed kernels never share a GPU,
whatever the sweep's generation concurrency. On the CPU a device is just a worker slot.

A device may have several workers (``workers_per_device``): their compiles and checks overlap,
which keeps the host's cores busy while one worker waits on the GPU. In a timed sweep they
share the device's lock (``device_lock.py``): each checks step by step beside the others and
times with the device to itself, so no timed kernel shares the device with any other work.
Those workers share the GPU's memory, so a job that ran out of it there (a neighbour's large
case at the same moment) runs once more with the device to itself (``_DeviceGate``), and only
that verdict is kept; from then on fewer jobs share that device, until enough have fitted.

An agent's intermediate evaluations (a turn waiting for its verdict) go before final
candidates, since a generation thread is blocked on each; within a priority, first come first
served. ``--executor ray`` swaps this pool for ``kgb_core.ray_executor.RayPool``, which keeps
the same interface.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from kgb_core.errors import UserError
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator, uses_device_lock
from kgb_core.evaluation.job_memory import JobMemory, shared_capacity
from kgb_core.evaluation.job_queue import Empty as QueueEmpty
from kgb_core.evaluation.job_queue import OperatorQueue, Queued
from kgb_core.evaluation.results import EvalResult, ran_out_of_device_memory

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.backends import Backend

# Queue priorities: lower goes first.
AGENT_TURN = 0
FINAL = 1


@dataclass(frozen=True)
class EvalJob:
    """One candidate to evaluate: what ``Evaluator.evaluate`` takes."""

    op: str
    source: str
    method: str = ""
    sample: int = 0
    priority: int = FINAL
    # This job's input seeds, where it names its own (a service's request); else the pool's.
    seeds: tuple[int, ...] | None = None


@dataclass
class SlotUsage:
    """What one device slot did: jobs run, seconds spent evaluating, workers started."""

    slot: str
    jobs: int = 0
    busy_s: float = 0.0
    worker_starts: int = 0
    lost: int = 0  # jobs that were running when the slot's worker (a Ray actor) died
    retried_alone: int = 0  # jobs run again with the device to itself after running out of memory
    sharing_cap: int | None = None  # how many jobs may share its device now (_DeviceGate.cap)
    # The operator of the job running now, and since when (time.monotonic()): what a stalled
    # sweep or a slow service is waiting on.
    running: str = ""
    running_since: float = 0.0
    # Where the running job is at the device's gate: "waiting", "sharing", "alone" (a retry
    # after running out of memory, or a timed job where judges take no lock), "" (no gate).
    gate: str = ""
    # (start, end) of every job, time.monotonic() in the harness: when the device was busy.
    intervals: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "jobs": self.jobs, "busy_s": round(self.busy_s, 3),
                "worker_starts": self.worker_starts, "lost": self.lost,
                **({"retried_alone": self.retried_alone} if self.retried_alone else {}),
                **({"sharing_cap": self.sharing_cap} if self.sharing_cap is not None else {}),
                **({"running": self.running,
                    "running_s": round(time.monotonic() - self.running_since, 1)}
                   if self.running else {})}


def parse_devices(spec: str | None, backend: "Backend") -> list[int] | None:
    """``--devices``: None (one unpinned worker, as before), ``all``, ``0,1,3`` or ``0-3``."""
    if spec is None or spec.strip() == "":
        return None
    spec = spec.strip()
    if spec == "all":
        count = backend.device_count()
        if count < 1:
            raise UserError(f"--devices all: backend {backend.label} sees no device")
        return list(range(count))
    devices: list[int] = []
    try:
        for part in (p.strip() for p in spec.split(",")):
            if "-" in part.lstrip("-"):  # a range: 0-3 is 0,1,2,3
                first, last = (int(x) for x in part.split("-", 1))
                if last < first:
                    raise ValueError(part)
                devices.extend(range(first, last + 1))
            elif part:
                devices.append(int(part))
    except ValueError:
        raise UserError(f"--devices {spec!r}: give device indices such as 0,1,2,3 or 0-3, "
                        f"or all") from None
    if not devices or any(d < 0 for d in devices):
        raise UserError(f"--devices {spec!r}: give device indices such as 0,1,2,3, or all")
    if len(set(devices)) != len(devices):
        raise UserError(f"--devices {spec!r} names a device twice; one worker per device")
    count = backend.device_count()
    missing = [d for d in devices if d >= count]
    if missing:
        raise UserError(f"--devices {spec!r}: backend {backend.label} sees {count} device(s) "
                        f"(0..{count - 1}); there is no device {missing[0]}")
    if len(devices) > 1 and backend.device_environment(devices[0]) is None:
        raise UserError(f"backend {backend.label} does not say how to pin a worker to one "
                        f"device, so it cannot run on several; leave out --devices")
    return devices


def check_workers_per_device(workers_per_device: int) -> None:
    if workers_per_device < 1:
        raise UserError(f"--workers-per-device {workers_per_device}: give at least 1")


def shares_devices(settings: EvaluationSettings, workers_per_device: int) -> EvaluationSettings:
    """The settings of a device's several timed workers: with the device's lock, whatever the
    backend (two kernels timed at once on a device slow each other down, and neither's
    timing would mean anything)."""
    if workers_per_device > 1 and settings.timing and not settings.device_lock:
        return dataclasses.replace(settings, device_lock=True)
    return settings


def slot_names(devices: Sequence[int | None], workers_per_device: int = 1) -> list[str]:
    """The name of each worker slot: the device index ("0" for the unpinned worker), then
    "0#2", "0#3", ... for a device's further workers."""
    return [str(device if device is not None else 0) + (f"#{worker + 1}" if worker else "")
            for device in devices for worker in range(workers_per_device)]


class EvaluationPool(ABC):
    """Where a sweep's candidates are evaluated. ``submit`` is thread-safe and returns at once."""

    @abstractmethod
    def start(self) -> list[dict[str, Any]]:
        """Start every worker; return what each reported about itself (its ``ready`` message)."""

    @abstractmethod
    def submit(self, job: EvalJob) -> "Future[EvalResult]":
        """Queue one job; the future's result is its ``EvalResult``."""

    def submit_all(self, jobs: Sequence[EvalJob]) -> "list[Future[EvalResult]]":
        """Queue jobs together (an operator's candidates): a pool that keeps an operator's
        jobs on one worker sees them all at once."""
        return [self.submit(job) for job in jobs]

    @abstractmethod
    def usage(self) -> list[SlotUsage]:
        """Per slot: jobs, busy seconds, worker starts."""

    @property
    def slots(self) -> int:
        return len(self.usage())

    def describe(self) -> dict[str, Any]:
        """What the run's environment records about where it evaluated."""
        return {"executor": "local"}

    @abstractmethod
    def close(self, abort: bool = False) -> None:
        """Stop the workers; with ``abort``, without waiting for queued or running jobs."""

    def __enter__(self) -> "EvaluationPool":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(abort=exc_type is not None)


class _Share:
    """One job's hold on a shared device: the most jobs that held it at once meanwhile."""

    def __init__(self) -> None:
        self.peak = 0
        self.memory_wait_s = 0.0  # how long it waited for memory before it was admitted
        self.queued_at = time.monotonic()


# Jobs that fit beside each other, under a lowered cap, before one more may share the device.
RAISE_CAP_AFTER = 8
# How long the first job waiting for memory lets later jobs that fit pass it. Strictly in
# order, one large job at the head kept every job behind it waiting for memory that was free:
# eight workers on an H100 waited for memory 48 % of their time (h100-full-sweep-d0799ab), a
# median job there taking 21 s. Passing for good would starve a large job behind a
# stream of small ones; passing for this long delays it by at most this and one job's run.
PASS_PATIENCE_S = 20.0


class _DeviceGate:
    """Jobs on one device share it; a retry after running out of memory has it alone.

    An exclusive holder waits for the shared jobs running to finish, and from the moment it
    waits no new shared job starts, so the retry cannot starve behind a stream of them.

    Running out of memory also caps how many jobs share the device: half as many (rounded up)
    as held it at once when a job ran out (``note_out_of_memory``; the jobs of one crowd that
    all run out lower it once, not once each). Without the cap every later crowd runs out
    again, and each of its jobs runs twice (on an H100, four softmax checks whose processes
    held 10-17 GiB each: fewer requests a minute than two workers). The cap rises by one after ``RAISE_CAP_AFTER``
    jobs fit under it, so one large operator does not slow a sweep's small ones for good.

    Where the device's memory is known (``capacity``, bytes the jobs may hold together) and a
    job says what it needs (``job_memory.JobMemory``), jobs are admitted by bytes instead: a
    job shares the device while the needs of those sharing it and its own fit the capacity,
    or alone where its need alone does not. A job that fits may pass those waiting before it
    while the first of them has waited less than ``pass_patience_s``; after that they are
    admitted in the order they came, so a large one is not passed for good by a stream of
    small ones. The count cap then stays off (a job that runs out of memory is still run
    again alone, and its peak there is its operator's need from then on)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._shared = 0
        self._exclusive_wanted = 0
        self._exclusive = False
        self._holders: set[_Share] = set()
        self.cap: int | None = None  # no limit but the pool's workers
        self._fitted = 0
        self._most = 0  # the most jobs that ever shared the device at once
        self.capacity: int | None = None  # bytes the jobs may hold together, where known
        self.held_bytes = 0  # the needs of the jobs sharing the device now
        self._memory_queue: deque[_Share] = deque()  # jobs waiting for memory, in order
        self.memory_waited_s = 0.0  # what jobs waited for memory in all (a sweep's summary)
        self.pass_patience_s = PASS_PATIENCE_S
        self.passed = 0  # jobs admitted ahead of one that waited before them

    def _may_share(self, share: _Share, need: int | None) -> bool:
        if self._exclusive or self._exclusive_wanted:
            return False
        if self.capacity is None or need is None:
            return self.cap is None or self._shared < self.cap
        first = self._memory_queue[0]
        if first is not share and time.monotonic() - first.queued_at >= self.pass_patience_s:
            return False  # the first in line waited long enough: it goes next
        return self._shared == 0 or self.held_bytes + need <= self.capacity

    @contextmanager
    def shared(self, need: int | None = None) -> Iterator[_Share]:
        """A hold beside other jobs; ``need``, the job's bytes, counts against ``capacity``."""
        share = _Share()
        with self._condition:
            if self.capacity is None:
                need = None
            if need is not None:
                self._memory_queue.append(share)
            began = time.monotonic()
            try:
                self._condition.wait_for(lambda: self._may_share(share, need))
            finally:
                if need is not None:
                    if self._memory_queue[0] is not share:
                        self.passed += 1
                    self._memory_queue.remove(share)
                    share.memory_wait_s = time.monotonic() - began
                    self.memory_waited_s += share.memory_wait_s
                    self._condition.notify_all()  # the next in line may fit now
            self._shared += 1
            self.held_bytes += need or 0
            self._most = max(self._most, self._shared)
            self._holders.add(share)
            for holder in self._holders:
                holder.peak = max(holder.peak, self._shared)
        try:
            yield share
        finally:
            with self._condition:
                self._shared -= 1
                self.held_bytes -= need or 0
                self._holders.discard(share)
                self._condition.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._condition:
            self._exclusive_wanted += 1
            self._condition.wait_for(lambda: not (self._exclusive or self._shared))
            self._exclusive_wanted -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._condition:
                self._exclusive = False
                self._condition.notify_all()

    def note_out_of_memory(self, share: _Share) -> None:
        """A job ran out of memory while ``share.peak`` jobs held the device at most: fewer
        share it from now on. Alone, it says nothing of sharing; its retry alone is all."""
        if share.peak <= 1 or self.capacity is not None:
            return
        with self._condition:
            self._most = max(self._most, share.peak)
            self.cap = max(1, min(self.cap or share.peak, (share.peak + 1) // 2))
            self._fitted = 0

    def note_fit(self) -> None:
        """A job ended without running out of memory: enough of them lift the cap by one."""
        with self._condition:
            if self.cap is None:
                return
            self._fitted += 1
            if self._fitted >= RAISE_CAP_AFTER:
                # Past the most that ever shared it, the cap is lifted: no more can come.
                self.cap = self.cap + 1 if self.cap < self._most else None
                self._fitted = 0
                self._condition.notify_all()


def device_gates(devices: Sequence[int | None]) -> dict[int | None, _DeviceGate]:
    """One gate per device, for pools that share the devices (``DevicePool(gates=...)``)."""
    return {device: _DeviceGate() for device in devices}


# How much of the first try's message a job run again alone keeps (EvalResult.retried_alone).
RETRIED_MESSAGE_CHARS = 300


class DevicePool(EvaluationPool):
    """One worker process per device slot (``workers_per_device`` of them per device with
    timing off), each fed by its own thread from a shared queue."""

    def __init__(self, backend: "Backend", settings: EvaluationSettings,
                 devices: Sequence[int] | None = None, workers_per_device: int = 1,
                 gates: dict[int | None, "_DeviceGate"] | None = None,
                 memory: JobMemory | None = None) -> None:
        """``gates`` (``device_gates``) are shared with another pool on the same devices (a
        service's checks and timings): then this pool's jobs share each device with the
        other's, and a timing pool's have it alone. ``memory`` says each job's device bytes:
        with it, and a device that says its size, jobs sharing a device are admitted by bytes
        (``_DeviceGate``), not by count alone."""
        check_workers_per_device(workers_per_device)
        self.backend = backend
        self.settings = shares_devices(settings, workers_per_device)
        self.devices: list[int | None] = list(devices) if devices else [None]
        self.workers_per_device = workers_per_device
        self._shared_gates = gates is not None
        # An operator's candidates go to the judge that drew its inputs (job_queue.py).
        self._queue = OperatorQueue()
        self._sequence = itertools.count()
        self._evaluators: list[Evaluator] = []
        self._threads: list[threading.Thread] = []
        self._usage: list[SlotUsage] = []
        self._lock = threading.Lock()
        self._closed = False
        self._gates = gates if gates is not None else device_gates(self.devices)
        self.memory = memory

    def describe(self) -> dict[str, Any]:
        # workers_per_device only when above 1, so a plain run records what it always did.
        return {"executor": "local",
                "devices": [d for d in self.devices if d is not None] or None,
                **({"workers_per_device": self.workers_per_device}
                   if self.workers_per_device > 1 else {})}

    def _slots(self) -> list[tuple[int | None, str]]:
        """(device, slot name) of every worker, a device's workers next to each other."""
        names = slot_names(self.devices, self.workers_per_device)
        devices = [d for d in self.devices for _ in range(self.workers_per_device)]
        return list(zip(devices, names))

    def start(self) -> list[dict[str, Any]]:
        # With one worker per device its slot is what it always was (empty for the unpinned
        # worker, so results carry the old evaluated_on); with several, each is named.
        self._evaluators = [
            Evaluator.for_backend(self.backend, self.settings, device=device,
                                  slot=name if self.workers_per_device > 1 else None)
            for device, name in self._slots()]
        self._usage = [SlotUsage(slot=name) for _, name in self._slots()]
        # Workers start side by side: each pays torch/triton imports and device setup.
        errors: list[BaseException] = []

        def start_one(evaluator: Evaluator) -> None:
            try:
                evaluator.start()
            except BaseException as error:  # noqa: BLE001 - reported below, in order
                errors.append(error)

        starters = [threading.Thread(target=start_one, args=(e,), daemon=True)
                    for e in self._evaluators]
        for thread in starters:
            thread.start()
        for thread in starters:
            thread.join()
        if errors:
            self.close(abort=True)
            raise errors[0]
        if self.memory is not None:
            self._size_gates()
        for index, evaluator in enumerate(self._evaluators):
            thread = threading.Thread(target=self._serve, args=(index,), daemon=True,
                                      name=f"kgb-eval-{evaluator.slot or 0}")
            thread.start()
            self._threads.append(thread)
        return [{**e.worker_info, "slot": e.slot} for e in self._evaluators]

    @property
    def _alone_on_devices(self) -> bool:
        """One worker a device and no other pool on them: a job never passes a gate."""
        return self.workers_per_device == 1 and not self._shared_gates

    def _size_gates(self) -> None:
        """Each shared device's gate learns the bytes its jobs may hold together, from the size
        its judges reported (``Backend.device_memory_total``)."""
        if self._alone_on_devices:
            return
        for device, gate in self._gates.items():
            totals = [e.worker_info.get("device_memory_bytes")
                      for e, (on, _) in zip(self._evaluators, self._slots()) if on == device]
            if totals and totals[0]:
                gate.capacity = shared_capacity(int(totals[0]), len(totals))

    def submit(self, job: EvalJob) -> "Future[EvalResult]":
        return self.submit_all([job])[0]

    def submit_all(self, jobs: Sequence[EvalJob]) -> "list[Future[EvalResult]]":
        futures: "list[Future[EvalResult]]" = [Future() for _ in jobs]
        with self._lock:
            if self._closed:
                raise RuntimeError("the evaluation pool is closed")
            self._queue.put_all([Queued(job.priority, next(self._sequence), job, future)
                                 for job, future in zip(jobs, futures)])
        if self.memory is not None and any(g.capacity for g in self._gates.values()):
            # Read each operator's inputs on meta ahead of its turn at the gate (a large input
            # maker takes seconds on the host), in the order the jobs came.
            threading.Thread(target=self.memory.prefetch, args=([job.op for job in jobs],),
                             daemon=True, name="kgb-job-memory").start()
        return futures

    def memory_gates(self) -> list[dict[str, Any]]:
        """Each device's gate by bytes, where it has one: its capacity, what jobs waited, and
        how many were admitted ahead of one waiting before them."""
        return [{"device": device, "capacity_bytes": gate.capacity,
                 "memory_waited_s": round(gate.memory_waited_s, 1), "passed": gate.passed}
                for device, gate in self._gates.items() if gate.capacity]

    def _serve(self, index: int) -> None:
        usage = self._usage[index]
        while True:
            item = self._queue.get(index)
            if item.job is None or item.future is None:  # the stop sentinel
                return
            if not item.future.set_running_or_notify_cancel():
                continue
            started = time.monotonic()
            usage.running, usage.running_since = item.job.op, started
            result: EvalResult | None = None
            failure: BaseException | None = None
            try:
                result = self._evaluate(index, item.job)
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on it
                failure = error
            ended = time.monotonic()
            usage.running, usage.gate = "", ""
            # Accounted before the future resolves, so whoever sees the result sees it counted.
            usage.busy_s += ended - started
            usage.jobs += 1
            usage.intervals.append((started, ended))
            if failure is not None:
                item.future.set_exception(failure)
            else:
                item.future.set_result(result)

    def _evaluate(self, index: int, job: EvalJob) -> EvalResult:
        def run() -> EvalResult:
            return self._evaluators[index].evaluate(job.op, job.source, method=job.method,
                                                    sample=job.sample, seeds=job.seeds)

        gate, usage = self._gates[self._slots()[index][0]], self._usage[index]
        if (self.settings.timing and self._shared_gates
                and not uses_device_lock(self.settings, self.backend)):
            # A timed candidate has its device to itself: here for the whole job, where the
            # judges take no device lock that would give it the device for its timings alone.
            usage.gate = "waiting"
            with gate.exclusive():
                usage.gate = "alone"
                return run()
        if self._alone_on_devices:
            return run()
        usage.gate = "waiting"
        # Only a gate that knows its device's size reads needs (the CPU's does not: no meta
        # draws there, which for some operators take seconds of the host).
        need = self.memory.need(job.op) if self.memory is not None and gate.capacity else None
        with gate.shared(need) as share:
            usage.gate = "sharing"
            result = run()
        result.memory_wait_s = round(share.memory_wait_s, 3)
        if not ran_out_of_device_memory(result):
            gate.note_fit()
            self._observe_memory(job, result)
            return result
        gate.note_out_of_memory(share)
        usage.gate = "waiting"
        with gate.exclusive():
            usage.gate = "alone"
            usage.retried_alone += 1
            again = run()
        # Said on the result: its latency holds the first try, and the wait for every other
        # check on the device to end.
        again.retried_alone = f"{result.verdict}: {result.message}"[:RETRIED_MESSAGE_CHARS]
        again.memory_wait_s = result.memory_wait_s
        self._observe_memory(job, again)
        return again

    def _observe_memory(self, job: EvalJob, result: EvalResult) -> None:
        if self.memory is not None:
            self.memory.observe(job.op, result.device_peak_judge_bytes,
                                result.device_peak_runner_bytes)

    def usage(self) -> list[SlotUsage]:
        for evaluator, usage, (device, _) in zip(self._evaluators, self._usage, self._slots()):
            usage.worker_starts = evaluator.worker_starts
            usage.sharing_cap = self._gates[device].cap
        return list(self._usage) or [SlotUsage(slot=name) for _, name in self._slots()]

    def judge_statuses(self) -> dict[str, dict[str, Any]]:
        """Per slot, what its judge wrote it is doing (judge_status.py): for a stalled sweep."""
        return {name: evaluator.judge_status()
                for evaluator, (_, name) in zip(self._evaluators, self._slots())}

    def judge_stacks(self, wait_s: float = 1.0) -> dict[str, str]:
        """Per slot with a judge, its threads' stacks now (Evaluator.ask_for_stacks): every
        judge is asked at once, then given ``wait_s`` to write."""
        asked = [(name, evaluator, evaluator.ask_for_stacks())
                 for evaluator, (_, name) in zip(self._evaluators, self._slots())]
        time.sleep(wait_s)
        return {name: evaluator.stacks_since(offset) for name, evaluator, offset in asked
                if offset is not None}

    def close(self, abort: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if abort:
            # Queued jobs are cancelled; running ones end when their worker is killed.
            while True:
                try:
                    item = self._queue.get_nowait()
                except QueueEmpty:
                    break
                if item.future is not None:
                    item.future.cancel()
            for evaluator in self._evaluators:
                evaluator.kill_worker()
        for _ in self._threads:
            self._queue.put(Queued(1 << 30, next(self._sequence), None, None))
        for thread in self._threads:
            thread.join(timeout=None if not abort else 30)
        for evaluator in self._evaluators:
            evaluator.close()
