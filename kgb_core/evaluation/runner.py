"""The runner: the only process that runs candidate code, one fresh process per candidate.

It holds nothing worth forging. It imports no source plugin, so no reference, tolerance or
held-out case table exists in its memory; it never sees the store or the judge's descriptors.
It is forked from the template (``kgb_core.evaluation.template``) inside the sandbox, gets one
socket to the judge, and answers the judge's requests in order:

- ``load``: import the candidate file and find ``kernel``;
- ``call``: copy the inputs it was handed (``kgb_core.evaluation.exchange``, through the shared
  memory the judge made for it, ``kgb_core.evaluation.arena``) to the device, call
  ``kernel(*inputs)`` under the instrumentation (torch-op recorder, launch counter, thread
  watch, integrity guard), and hand back the raw output bytes and the inputs as they are after
  the call; it may keep the input tensors under a name, for a later call on the same tensors
  with new values written into them (the rewritten-inputs probe) or for timing;
- ``time``: time ``kernel`` on kept inputs with the backend's timer, keeping a sample of the
  timed outputs under the request's ``keep`` name;
- ``samples``: hand back the timed outputs a ``time`` request kept (asked for once the judge no
  longer holds the device alone: copying them out is no timed work);
- ``exit``: leave cleanly (status 0), which the judge requires of an honest runner.

Every reply carries the request's sequence number and nonce. A reply may report a failure the
instrumentation saw (``RUNNER_VERDICTS``): a runner can only ever fail itself that way. A pass
is decided by the judge alone, from the bytes, on inputs the runner could not predict.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import os
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kgb_core.evaluation import verdicts

# What a runner may report about itself; anything else in a failure reply is tampering.
RUNNER_VERDICTS = frozenset({
    verdicts.COMPILE_ERROR, verdicts.RUNTIME_ERROR, verdicts.OOM, verdicts.SCREEN_REJECTED,
    verdicts.LIMIT_EXCEEDED, verdicts.TAMPERING, verdicts.DEFERRED_WORK,
    verdicts.NO_TRITON_LAUNCH, verdicts.REFERENCE_USED, verdicts.HOST_READ,
})
ENTRY_POINT = "kernel"
# The largest request the runner accepts on its channel (the judge sends descriptions only).
MAX_REQUEST_BYTES = 64 << 20
# Input storages up to this size are copied on the device when they arrive, so that a reply can
# name them unchanged instead of sending them back (kgb_core/evaluation/exchange.py).
DEVICE_COPY_MAX_BYTES = 1 << 30


class CandidateFailure(Exception):
    def __init__(self, verdict: str, message: str) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.message = message


def tensors_in(value: Any) -> list[Any]:
    """The tensors of a value and of its nested tuples and lists, in order."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []


def clone_tree(value: Any, device: Any = None) -> Any:
    """A deep copy of tensors (kept with their strides) inside tuples and lists, on ``device``
    where given (else each tensor's own)."""
    import torch

    if isinstance(value, torch.Tensor):
        copy = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                   device=value.device if device is None else device)
        copy.copy_(value)
        return copy
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v, device) for v in value)
    return value


def short_traceback(error: BaseException, candidate_path: str) -> str:
    """The exception, with only the frames in the candidate's own file (what its author needs)."""
    lines = [f"{type(error).__name__}: {error}", *_candidate_lines(error, candidate_path)]
    # Triton reports an error inside a called @triton.jit function as a CompilationError at
    # the call site, and the interpreter one inside a kernel's body as an InterpreterError at
    # the launch: the real reason, and the kernel's own failing line, are in the chained cause.
    for cause in _causes(error):
        lines.append(f"caused by {type(cause).__name__}: {cause}")
        lines.extend(_candidate_lines(cause, candidate_path))
    text = "\n".join(lines)
    return text if len(text) <= 4000 else text[:1500] + "\n...\n" + text[-2500:]


def _candidate_lines(error: BaseException, candidate_path: str) -> list[str]:
    """The last frames of ``error``'s traceback that are in the candidate's file."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == candidate_path]
    return [f"  line {frame.lineno}, in {frame.name}: {frame.line}" for frame in frames[-5:]]


def _causes(error: BaseException, limit: int = 4) -> list[BaseException]:
    """The exceptions ``error`` was raised from, innermost last (a cycle-safe walk)."""
    chain: list[BaseException] = []
    cause = error.__cause__ or error.__context__
    while cause is not None and len(chain) < limit and cause not in chain and cause is not error:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def classify(error: BaseException) -> str:
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return verdicts.OOM
    names = {cls.__name__ for cls in type(error).__mro__}
    # Triton's interpreter wraps whatever a @triton.jit body raises in InterpreterError; those
    # are the errors (unknown tl functions, type or shape mismatches) the compiler reports on a
    # GPU, so both count as compile errors.
    if names & {"CompilationError", "CompileTimeAssertionFailure", "InterpreterError"}:
        # An access outside the launch's tensors (the CPU backend's bounds check,
        # kgb_backends/interpreter_shims.py) is a run-time fault on a GPU too.
        if any(type(cause).__name__ == "OutOfBoundsAccess" for cause in _causes(error)):
            return verdicts.RUNTIME_ERROR
        return verdicts.COMPILE_ERROR
    text = str(error).lower()
    if "out of memory" in text or "can't allocate memory" in text:
        return verdicts.OOM
    return verdicts.RUNTIME_ERROR


_module_numbers = itertools.count(1)  # an iterator, not an int: see integrity.py on state


def load_kernel(path: str, contract: Any = None) -> tuple[Callable[..., Any], Any]:
    """Import the candidate file under a fresh module name and return its ``kernel``, with the
    module adapter that made it (``kgb_core.module_contract``) where the operator takes a
    module class (``contract``) and the file defines that class instead of ``kernel``."""
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
                               "import failed: " + short_traceback(error, path)) from None
    # Read from the module's namespace, never through getattr: a module-level __getattr__
    # is the candidate's code.
    kernel = vars(module).get(ENTRY_POINT)
    if callable(kernel):
        return kernel, None
    adapter = contract.adapter(vars(module)) if contract is not None else None
    if adapter is not None:
        return adapter, adapter
    other = getattr(contract, "class_name", None) or getattr(contract, "function", None)
    wanted = f"`{ENTRY_POINT}`" + (f" or `{other}`" if other else "")
    raise CandidateFailure(verdicts.SCREEN_REJECTED,
                           f"{wanted} is missing or not callable after import")


def _os_threads() -> set[str]:
    """The process's threads as the kernel sees them (Linux), Python-made or not."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


@dataclass
class RunnerConfig:
    """What the template hands each runner: its backend and the launch limits to enforce."""

    backend_module: str
    backend_name: str
    max_num_warps: int | None = None
    max_block_size: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunnerConfig":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})


def load_backend(module_name: str, backend_name: str) -> Any:
    """The backend object, from the one module that registers it: the runner never loads the
    plugin registry (which would import every source plugin, references and tables included)."""
    module = importlib.import_module(module_name.partition(":")[0])
    found: list[Any] = []
    hook = getattr(module, "kgb_register_backends", None)
    if hook is None:
        raise RuntimeError(f"{module_name} has no kgb_register_backends hook")
    hook(register=found.append)
    for backend in found:
        if getattr(backend, "name", None) == backend_name:
            return backend
    raise RuntimeError(f"{module_name} registers no backend named {backend_name!r}")


class Runner:
    """One candidate's process: its instrumentation, its kernel, its kept input sets."""

    def __init__(self, backend: Any, counter: Any, io_dir: str, arenas: Any) -> None:
        self.backend = backend
        self.counter = counter
        self.io_dir = io_dir
        # The shared memory a call's tensors cross in (kgb_core.evaluation.arena.Arenas).
        self.arenas = arenas
        self.device = backend.setup()
        self.harness_stream = backend.current_stream()
        if self.harness_stream is not None:
            counter.stream_probe = backend.current_stream
        self.kernel: Callable[..., Any] | None = None
        # Where the candidate is a module class: the runner's own adapter, which builds the
        # module outside the recorders (``prepare``), as importing the file ran outside them.
        self.module_adapter: Any = None
        self.path = ""
        self.kept: dict[str, list[Any]] = {}
        # Each time request's sampled timed outputs (TimedCalls.sample_entries), by its
        # ``keep`` name, until a ``samples`` request takes them: a batch of cases is timed
        # under one exclusive hold, and their samples are asked for after it, one by one.
        self.timed_samples: dict[str, list[list[Any]]] = {}
        # The last checked call's rearranging torch copies (recorder.StagedCopies), until its
        # reply takes them.
        self.staged: Any = None
        # The operator only moves data (OperatorSpec.moves_data): torch's copies judged so.
        self.moves_data = False
        from kgb_core.timing import Timers

        self.timers = Timers(backend)
        # The default timer (its clock, events and flush buffer) exists before any candidate
        # is imported; a run's own timing settings make theirs on first use.
        self.timers.get(None)
        # Torch's profiler starts a thread of its own the first time it runs: started here,
        # it is the runner's, not a thread a candidate's call left behind.
        from kgb_core.evaluation.recorder import OpProfile

        with OpProfile():
            pass
        self._last_output_bytes: list[int] = []
        # The last call's output storages, alive until a call that is not a ghost replay: the
        # replay runs on the inputs of the call just before it, whose freed output (the right
        # answer) the replay's unwritten output could otherwise be handed. NaN-filling a block
        # of its size (poison_free_memory) was not enough: the caching allocator coalesces the
        # freed poison block with its neighbours, so best fit can then pick the old output's
        # block instead (aten.linear's reference got ghost_replay_matched on an H100).
        self._held_outputs: list[Any] = []
        # Device state the timer depends on (L2 persistence on NVIDIA), as it is before any
        # candidate code runs; the counter checks it at every launch, the runner after calls.
        self._device_state_changes = backend.device_state_watch()
        counter.state_probe = self._device_state_changes
        from kgb_core.evaluation.integrity import IntegrityGuard

        # Bound now, before any candidate code runs: replacing IntegrityGuard.changes later
        # does not change this method object (and the guard reports the replacement).
        self._guard_changes = IntegrityGuard(
            plugin_packages=(type(backend).__module__.split(".")[0],)).changes

    # -- requests ---------------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        kind = request.get("op")
        if kind == "load":
            self.path = os.path.join(self.io_dir, request["file"])
            contract = request.get("module_contract")
            if contract is not None:
                from kgb_core.module_contract import contract_from_dict

                contract = contract_from_dict(contract)
            self.moves_data = bool(request.get("moves_data"))
            self.kernel, self.module_adapter = load_kernel(self.path, contract)
            self._check_integrity("while being imported")
            self._check_import_left_nothing_running()
            return {}
        if kind == "call":
            return self._call_request(request)
        if kind == "time":
            return self._time_request(request)
        if kind == "samples":
            return self._samples_request(request)
        if kind == "put":
            # Inputs handed over ahead of the request that uses them (a timed case's sets,
            # sent while the device is shared, timed later with the device held alone).
            if not request.get("keep"):
                raise CandidateFailure(verdicts.RUNTIME_ERROR, "a put without a name")
            if request.get("append"):  # one input set more under the name (a list of sets)
                self.kept.setdefault(request["keep"], []).append(self._inputs(request))
            else:
                self.kept[request["keep"]] = self._inputs(request)
            return {}
        raise CandidateFailure(verdicts.RUNTIME_ERROR, f"unknown request {kind!r}")

    def _inputs(self, request: dict[str, Any],
                received: list[tuple[int, Any, Any]] | None = None) -> list[Any]:
        """The request's inputs. ``received`` collects, for inputs handed over afresh (not
        written into kept tensors), (offset in the request's bytes, storage, the bytes it came as)
        of each storage (``exchange.unpack``)."""
        from kgb_core.evaluation import exchange

        handed = None
        arrived: list[tuple[int, Any, Any]] = []
        if request.get("inputs") is not None:
            blob = self.arenas.requests.for_reading(int(request.get("bytes") or 0))
            handed = list(exchange.unpack(request["inputs"], blob, self.device,
                                          received=arrived))
        reuse = request.get("reuse")
        if reuse is None:
            if handed is None:
                raise CandidateFailure(verdicts.RUNTIME_ERROR, "a call without inputs")
            if received is not None:
                received.extend(arrived)
            return handed
        inputs = self.kept[reuse]
        if handed is not None:  # new values, written into the very same tensors
            for target, values in zip(tensors_in(inputs), tensors_in(handed)):
                target.copy_(values)
            self.backend.synchronize()
        return inputs

    def _kept_inputs(self, request: dict[str, Any],
                     received: list[tuple[int, Any, Any]]) -> list[Any]:
        """A call's inputs (``_inputs``), kept under its ``keep`` name when it gives one."""
        inputs = self._inputs(request, received)
        if request.get("keep"):
            self.kept[request["keep"]] = inputs
        return inputs

    def _call_request(self, request: dict[str, Any]) -> dict[str, Any]:
        from kgb_core.evaluation import exchange

        ghost = bool(request.get("ghost"))
        if not ghost:
            self._held_outputs = []
        began = time.perf_counter()
        received: list[tuple[int, Any, Any]] = []
        inputs = self._kept_inputs(request, received)
        # Each storage handed over afresh, by its index in the judge's order (by offset in the
        # request's bytes), with the bytes it came as: on the host, the request arena's (the
        # judge writes there only before a request); on a device, a copy there (no transfer).
        # One past DEVICE_COPY_MAX_BYTES is sent back as before: its copy would double the
        # device memory of the largest cases.
        handed = [(index, storage, data if storage.device.type == "cpu"
                   else exchange.storage_bytes(storage).clone())
                  for index, (_, storage, data) in enumerate(sorted(received,
                                                                    key=lambda r: r[0]))
                  if storage.device.type == "cpu" or storage.nbytes() <= DEVICE_COPY_MAX_BYTES]
        calling = time.perf_counter()
        actual = self._call(list(inputs), ghost=ghost)
        called = time.perf_counter()
        # The input storages the call left as they came are named, not sent back (a large
        # case's inputs then cross once): compared byte for byte on the device.
        unchanged = {exchange.storage_key(storage): index for index, storage, before in handed
                     if exchange.storage_bytes(storage).equal(before)}
        del handed
        # Output and inputs in one tree: a storage they share is one storage on the judge's
        # side too, which is how the judge sees an output aliasing an input.
        # The copies that rearranged memory travel too, for the judge to compare with the
        # output (StagedCopies).
        staged, self.staged = self.staged, None
        packed = exchange.pack([actual, list(inputs), staged.kept if staged else []],
                               opaque=True, unchanged=unchanged)
        nbytes = packed.place(self.arenas.replies)
        self._held_outputs = [exchange._untyped_storage(t) for t in tensors_in([actual])
                              if exchange._not_plain(t) is None]
        return {"tree": packed.tree, "bytes": nbytes, "launches": self.counter.count,
                "kernel_names": self.counter.kernel_names[:16],
                "staged_sites": staged.sites if staged else [],
                "moved_sites": staged.moved if staged else [],
                # Where the request's time went (a diagnostic: no verdict reads it).
                "phases": {"inputs": round(calling - began, 4),
                           "call": round(called - calling, 4),
                           # Of the call: inside Triton's launches (compiling a new
                           # specialization included), on the host.
                           "launches": round(self.counter.launch_s, 4),
                           # Of the launches: compiling.
                           "compile": round(self.counter.compile_s, 4),
                           "reply": round(time.perf_counter() - called, 4)}}

    def _time_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Time ``kernel`` under the same recorders as a checked call (a timed call cannot tell
        itself from a checked one by torch's mode stacks), cycling through the input sets the
        judge handed over, and keep a random sample of the timed outputs under the request's
        ``keep`` name for a ``samples`` request: the judge holds the device alone for this
        request, and copying the sample out there kept every other judge waiting (0.08 s of
        the runner's and 0.05 s of the judge's a timed case, on an H100)."""
        from kgb_core.evaluation.recorder import Recording

        began = time.perf_counter()
        if not request.get("keep"):  # the name its samples are asked for by
            raise CandidateFailure(verdicts.RUNTIME_ERROR, "a time request without a name")
        self._held_outputs = []  # (kept for a ghost replay only; timing may need the memory)
        sets = self._inputs(request)
        if request.get("reuse"):  # handed over by a put: used once, its memory then freed
            self.kept.pop(request["reuse"], None)
        # The first set, for the judge's call after timing.
        self.kept[request["keep"]] = sets[0]
        timer = self.timers.get(request.get("settings"))
        self._prepare(sets, bind=True)
        calls = TimedCalls(self.kernel, self.counter, sets, int(request.get("sample") or 0),
                           int(request.get("sample_seed") or 0),
                           written=[int(i) for i in request.get("written") or ()],
                           variation=_variation(request.get("variation")))
        self.counter.reset()
        recording = Recording(self.counter, profiled=True)
        threads_before = set(threading.enumerate())
        # The device-state probe is read after the timed calls, not at each launch: two driver
        # calls a launch put 9 us of host time inside the timed region of a 7 us kernel on the
        # H200 (results/h200-timer-fidelity-recorded-dec3a9b.txt), and what it guards, L2
        # persistence, made every timed kernel slower there, never faster
        # (results/h200-l2-persistence-1b9e92e.txt).
        probe, self.counter.state_probe = self.counter.state_probe, None
        measuring = time.perf_counter()
        try:
            with recording:
                timing = timer.measure(calls, prepare=calls.prepare)
            calls.finish()
        except Exception as error:
            raise CandidateFailure(classify(error), "while timing: "
                                   + short_traceback(error, self.path)) from None
        finally:
            self.counter.state_probe = probe
            if self.module_adapter is not None and self.module_adapter.builds:
                self.module_adapter.release()  # the timed sets' instances, and their tensors
        checking = time.perf_counter()
        self._check_recording(recording, "while being timed", calls.count)
        self._check_integrity("while being timed")
        self._check_streams("while being timed, a")
        leftover = _threads_started_since(threads_before)
        if calls.left_running or leftover:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   f"while being timed, {max(calls.left_running, 1)} of "
                                   f"{calls.count} calls of kernel(...) returned with a thread "
                                   f"of their own still running: its work falls outside the "
                                   f"timed region")
        if calls.launchless:
            raise CandidateFailure(verdicts.NO_TRITON_LAUNCH,
                                   f"while being timed, {calls.launchless} of {calls.count} "
                                   f"calls of kernel(...) launched no @triton.jit kernel")
        # Kept whole (the outputs were copied as they were sampled, TimedCalls._freeze), under
        # this request's own name: a later time request in the batch keeps its own beside it.
        self.timed_samples[request["keep"]] = calls.sample_entries()
        # Where the request's time went, for the judge's record of its exclusive hold (a
        # diagnostic: no verdict reads it).
        phases = {"setup": measuring - began, "timed calls": checking - measuring,
                  "checks": time.perf_counter() - checking}
        return {"timing": timing.to_dict(),
                "phases": {name: round(seconds, 4) for name, seconds in phases.items()}}

    def _samples_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """The timed outputs the time request named ``of`` kept, packed into the reply arena
        as the time request's reply once carried them, and forgotten (their memory freed)."""
        from kgb_core.evaluation import exchange

        began = time.perf_counter()
        entries = self.timed_samples.pop(str(request.get("of") or ""), None)
        if entries is None:
            raise CandidateFailure(verdicts.RUNTIME_ERROR,
                                   f"no timed samples kept under {request.get('of')!r}")
        packed = exchange.pack(entries, opaque=True)
        samples = {"tree": packed.tree, "bytes": packed.place(self.arenas.replies)}
        return {"samples": samples,
                "phases": {"samples": round(time.perf_counter() - began, 4)}}

    # -- one instrumented call ---------------------------------------------------------------
    def changes(self) -> list[str]:
        return self._guard_changes()

    def _check_integrity(self, when: str) -> None:
        changed = self._guard_changes()
        if changed:
            raise CandidateFailure(verdicts.TAMPERING, f"{when}, the candidate replaced "
                                   f"{', '.join(changed[:5])}")
        state = self.counter.state_violations or (
            self._device_state_changes() if self._device_state_changes else [])
        if state:
            raise CandidateFailure(verdicts.TAMPERING, f"{when}, the candidate changed device "
                                   f"state the timer depends on: {'; '.join(state)}")

    def _check_recording(self, recording: Any, when: str, calls: int = 1) -> None:
        """The mode stacks as the recorders left them, then what they saw."""
        tampered = recording.tampered or (self.counter.mode_violations or [None])[0]
        if tampered:
            raise CandidateFailure(verdicts.TAMPERING, f"{when}: {tampered}")
        _refuse_torch_work(recording.forbidden_sites(), f"torch computed {when}")
        message = recording.host_read_message(calls)
        if message:
            raise CandidateFailure(verdicts.HOST_READ, f"{when}, {message}")
        profile = recording.profile
        if profile is not None:
            hidden = profile.forbidden()
            if profile.broken:
                raise CandidateFailure(verdicts.TAMPERING, f"{when}: torch's profiler, which "
                                       f"the call ran under, was stopped ({profile.broken})")
            _refuse_torch_work(hidden, f"torch computed {when} with the recorders switched off "
                                       f"(torch's profiler saw them)")

    def _check_import_left_nothing_running(self) -> None:
        """A thread started at import would do work where no recorder (they are per thread) and
        no timer looks; a mode left on the stack would see the runner's own reads."""
        from kgb_core.evaluation.recorder import clear_modes, modes_depth

        if modes_depth() != (0, 0):
            clear_modes()
            raise CandidateFailure(verdicts.TAMPERING, "while being imported, the candidate "
                                   "left a torch mode on the stack")
        others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        if others:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   f"while being imported, the candidate started {len(others)} "
                                   f"thread(s) that still run ({others[0]}): work there is "
                                   f"seen by no recorder and no timer")

    def _check_streams(self, lead: str) -> None:
        if {s for s in self.counter.streams if s != self.harness_stream}:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   f"{lead} Triton kernel was launched on a stream other than "
                                   f"the harness's, where the timer cannot see it")

    def _prepare(self, sets: list[list[Any]], *, bind: bool = False) -> None:
        """Build a module-class candidate for these calls' constructor arguments (with
        ``bind``, an instance per set holding its state: the timed sets), outside the recorders
        like its import, and with the same checks after it."""
        if self.module_adapter is None or not self.module_adapter.builds:
            return
        for inputs in sets:
            try:
                self.module_adapter.prepare(inputs, bind=bind)
            except Exception as error:
                raise CandidateFailure(verdicts.RUNTIME_ERROR, "building the module failed: "
                                       + short_traceback(error, self.path)) from None
        self._check_integrity("while the module was built")

    def _call(self, inputs: list[Any], *, ghost: bool = False) -> Any:
        """kernel(*inputs) with every call-level rule enforced; raises CandidateFailure."""
        from kgb_core.evaluation.recorder import Recording, StagedCopies

        if self.kernel is None:
            raise CandidateFailure(verdicts.RUNTIME_ERROR, "no candidate loaded")
        self.backend.synchronize()
        input_bytes = sum(t.numel() * t.element_size() for t in tensors_in(inputs))
        self.backend.poison_free_memory(2 * input_bytes)
        for nbytes in self._last_output_bytes:
            self.backend.poison_free_memory(nbytes)
        threads_before = set(threading.enumerate())
        tasks_before = _os_threads() if self.backend.watch_os_threads else set()
        self._prepare([inputs])
        self.counter.reset()
        self.counter.ghost = ghost
        # A checked call keeps the copies that rearranged memory, for the judge (StagedCopies);
        # staging needs about the inputs' size, once for the layout and once for a dtype.
        staged = None if ghost else StagedCopies(STAGED_BYTES_PER_INPUT_BYTE * input_bytes
                                                 + STAGED_BYTES_SLACK, tensors_in(inputs),
                                                 moves_data=self.moves_data)
        self.staged = self.counter.staged = staged
        # Under ghost replay, what the candidate allocates reads NaN (or -1) until written.
        recording = Recording(self.counter, profiled=True, staged=staged, poisoned=ghost)
        try:
            with recording:
                actual = self.kernel(*inputs)
            self.backend.synchronize()
            if staged is not None and staged.assembling:
                staged.at_launch("")  # what torch assembled after the last launch
        except Exception as error:
            if recording.tampered or self.counter.mode_violations:
                self._check_recording(recording, "during kernel(...)")
            if self.counter.limit_violations:
                raise CandidateFailure(verdicts.LIMIT_EXCEEDED,
                                       self.counter.limit_violations[0]) from None
            raise CandidateFailure(classify(error), short_traceback(error, self.path)) from None
        finally:
            self.counter.ghost = False
            self.counter.staged = None
        self._last_output_bytes = [t.untyped_storage().nbytes() for t in tensors_in([actual])][:8]
        if self.counter.limit_violations:  # the candidate caught the error and went on
            raise CandidateFailure(verdicts.LIMIT_EXCEEDED, self.counter.limit_violations[0])
        self._check_integrity("during kernel(...)")
        if self.counter.count == 0 and not ghost:
            raise CandidateFailure(verdicts.NO_TRITON_LAUNCH,
                                   "kernel(...) returned without launching a @triton.jit kernel")
        # What torch did, on this thread and on those the call started, before what is left
        # running (torch's own worker threads, started by that work, would hide it). Under ghost
        # replay the launches did nothing: only tampering counts, then the output.
        if not ghost or recording.tampered or self.counter.mode_violations:
            self._check_recording(recording, "during kernel(...)")
        if staged is not None and staged.refused:
            raise CandidateFailure(verdicts.REFERENCE_USED,
                                   f"during kernel(...), torch copies rearranged more than "
                                   f"{staged.budget} bytes (twice the inputs' size, and 1 MiB), "
                                   f"more than staging the inputs needs, up to {staged.refused}: "
                                   f"moving the data is the Triton kernels' work")
        leftover = _threads_started_since(threads_before)
        if self.backend.watch_os_threads:
            leftover += [f"OS thread {task}" for task in _os_threads() - tasks_before]
        if leftover:
            raise CandidateFailure(verdicts.DEFERRED_WORK,
                                   f"kernel(...) returned with {len(leftover)} thread(s) of its "
                                   f"own still running ({leftover[0]})")
        self._check_streams("a")
        return actual


def _threads_started_since(before: set[threading.Thread]) -> list[str]:
    """The names of Python threads alive now that were not in ``before``."""
    return [t.name for t in threading.enumerate() if t not in before and t.is_alive()]


def _refuse_torch_work(ops: list[str], lead: str) -> None:
    """``reference_used`` for the aten ops named, if any."""
    if ops:
        distinct = list(dict.fromkeys(ops))  # in the order the candidate called them
        shown = "; ".join(distinct[:8])
        more = f"; and {len(distinct) - 8} more" if len(distinct) > 8 else ""
        raise CandidateFailure(verdicts.REFERENCE_USED,
                               f"{lead}: {shown}{more}; only allocation, views and copies may "
                               f"be done with torch")


def _variation(asked: Any) -> dict[str, Any] | None:
    """The judge's word on how timed inputs vary, checked: a mode kgb knows, positions as
    integers; anything else scales every argument."""
    if not isinstance(asked, dict) or asked.get("mode") not in ("scale", "shift"):
        return None
    positions = asked.get("args")
    if positions is not None:
        positions = [int(i) for i in positions]
    return {"mode": asked["mode"], "args": positions}


def value_scale(index: int) -> float:
    """The factor timed call ``index``'s floating inputs are scaled by: 1 + 1/64 to 1.25, a
    different one for every call (the fractional parts of multiples of the golden ratio never
    repeat), so that no two timed calls see the same values and a table of answers keyed on
    the inputs' content never hits. -1 (a call no ``prepare`` preceded) scales by 1."""
    if index < 0:
        return 1.0
    fraction = (index * 0.6180339887498949) % 1.0
    return 1.0 + 2.0 ** -6 + fraction * (0.25 - 2.0 ** -6)


def varied_tensors(arguments: list[Any], variation: dict[str, Any] | None) -> list[Any]:
    """The tensors among ``arguments`` that ``vary_values`` gives new values: the floating and
    complex ones of the positions ``variation`` names (all, where it names none); fp8 ones
    are left alone, torch has no arithmetic on them."""
    import torch

    positions = (variation or {}).get("args")
    chosen = arguments if positions is None else [arguments[i] for i in positions
                                                  if 0 <= i < len(arguments)]
    varied = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
              torch.complex128)
    return [tensor for tensor in tensors_in(chosen) if tensor.dtype in varied]


def vary_values(arguments: list[Any], index: int, variation: dict[str, Any] | None) -> None:
    """Give timed call ``index``'s arguments their new values, as the operator asks
    (``OperatorSpec.timed_variation``: ``{"mode": "scale" | "shift", "args": positions or
    None}``; None: scale every argument): ``varied_tensors`` are scaled by ``value_scale`` or
    shifted by it less 1, in place."""
    factor = value_scale(index)
    if factor == 1.0:
        return
    for tensor in varied_tensors(arguments, variation):
        write_varied(tensor, tensor, factor, variation)


def write_varied(target: Any, source: Any, factor: float,
                 variation: dict[str, Any] | None) -> None:
    """``source`` scaled by ``factor`` (or shifted by it less 1), written into ``target`` in
    one pass: ``target`` may be ``source`` itself."""
    import torch

    if (variation or {}).get("mode", "scale") == "shift":
        torch.add(source, factor - 1.0, out=target)
    else:
        torch.mul(source, factor, out=target)


# The bytes of rearranging torch copies a checked call may make (StagedCopies): this many per
# input byte, plus a little for small cases.
STAGED_BYTES_PER_INPUT_BYTE = 2
STAGED_BYTES_SLACK = 1 << 20

# Up to this many timed calls, of at most this many output bytes in all, every one is compared.
EVERY_CALL_UP_TO = 8
EVERY_CALL_BYTES = 64 << 20


def _nbytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_in(value))


class TimedCalls:
    """The timed calls of ``kernel``: input sets cycled, new values before every call, a sample.

    The judge hands over several input sets (distinct storages, distinct values). Call ``i``
    runs on set ``i % n``; before it, outside the timed region (the timer's ``prepare``, where
    no recorder looks), the set is given the values of set ``(i % n + i // n) % n``, its
    floating tensors scaled by ``value_scale(i)``: its version counter moves and its values
    are new on every call, so an answer kept from an earlier call, keyed on a tensor's
    identity, pointer, version, shape or content, is not the answer now. A reservoir sample of
    ``sample`` outputs (uniform over every call, positions drawn from the judge's seed) goes
    back with the values and scale each was computed from, for the judge to compare. Where the
    operator writes its arguments (``written``: their positions, from the judge), a sampled
    call's arguments are copied when the set is next prepared (or after the last call), before
    anything overwrites them and outside the timed region, and go back with it.
    """

    def __init__(self, kernel: Callable[..., Any], counter: Any, sets: list[Any], sample: int,
                 seed: int, written: Sequence[int] = (),
                 variation: dict[str, Any] | None = None) -> None:
        import random

        self.kernel = kernel
        self.variation = variation
        self.counter = counter
        self.sets = sets
        self.written = tuple(written)
        # Sampled calls' output and arguments as the call left them, by call index (operators
        # that write their arguments).
        self.after: dict[int, tuple[Any, list[Any]]] = {}
        self.values = [[t.clone() for t in tensors_in(one)] for one in sets]
        # Per set: no two of its tensors share a storage (``_write_values`` may then write
        # each varied one in one pass).
        self._apart = [len({t.untyped_storage().data_ptr() for t in tensors_in(one)})
                       == len(tensors_in(one)) for one in sets]
        # The call each set was last prepared for (-1: none, it holds its own values).
        self.prepared_for = [-1] * len(sets)
        self.sample_size = sample
        self.samples: list[tuple[int, int, int, Any]] = []
        # Every call, while there are few and small ones (None once there are not): a
        # candidate that cheats in only a few of a handful of calls cannot slip past a sample.
        self.every: list[tuple[int, int, int, Any]] | None = []
        self.every_bytes = 0
        self._random = random.Random(seed)
        self._frozen = -1  # the last call whose sampled output was copied (_freeze)
        self.count = 0
        self.launchless = 0
        # Calls that returned with a thread they started still running: work after the clock.
        self.left_running = 0

    def prepare(self) -> None:
        """Write the next call's values into its set (an in-place operator's last call is
        undone too), harness work the recorders do not count."""
        from kgb_core.evaluation.recorder import HARNESS_RANGE, profile_range, suspended

        target = self.count % len(self.sets)
        with suspended(), profile_range(HARNESS_RANGE, self.counter):
            self._freeze(self.count - 1)
            self._keep_arguments(self.count - len(self.sets))
            self._write_values(target)
        self.prepared_for[target] = self.count

    def _write_values(self, target: int) -> None:
        """Set ``target`` gets this call's values: each tensor its source's, varied where
        ``vary_values`` varies it. The timed device is held alone meanwhile, and each timed
        call of a large case spent as long again copying its values in and then scaling them
        in place: where no two of the set's tensors share memory (so the order of writes
        cannot matter), each varied tensor is written once, scaled on the way in, to the
        same values."""
        tensors = tensors_in(self.sets[target])
        sources = self.values[self._values_for(self.count)]
        factor = value_scale(self.count)
        if factor == 1.0 or not self._apart[target]:
            for tensor, source in zip(tensors, sources):
                tensor.copy_(source)
            vary_values(self.sets[target], self.count, self.variation)
            return
        varied = {id(t) for t in varied_tensors(self.sets[target], self.variation)}
        for tensor, source in zip(tensors, sources):
            if id(tensor) in varied:
                write_varied(tensor, source, factor, self.variation)
            else:
                tensor.copy_(source)

    def finish(self) -> None:
        """After the last call: keep the arguments of sampled calls no prepare came after."""
        from kgb_core.evaluation.recorder import suspended

        with suspended():
            self._freeze(self.count - 1)
            for index in range(max(0, self.count - len(self.sets)), self.count):
                self._keep_arguments(index)

    def _freeze(self, index: int) -> None:
        """Call ``index``'s output, if it is in the sample, copied now, before the candidate
        runs again, and the copy kept in its place. The candidate's own tensor goes, as an
        unsampled output's does at once: whether its output is still held would tell a
        candidate which calls are checked (``_use_count()`` on its storage), and a sampled
        one could then be written right on the next call, before the judge reads it."""
        if index < 0 or index == self._frozen:
            return
        self._frozen = index
        for entries in (self.samples, self.every or []):
            for position, entry in enumerate(entries):
                if entry[0] == index:
                    entries[position] = (*entry[:3], clone_tree(entry[3]))

    def _keep_arguments(self, index: int) -> None:
        """Copy call ``index``'s output and arguments, as the call left them, if it is in the
        sample and the operator writes its arguments; its set holds them until it is prepared
        again."""
        if not self.written or index < 0:
            return
        for entry in self._sampled():
            if entry[0] == index:  # the output too: it may be one of the arguments
                self.after[index] = (clone_tree(entry[3]),
                                     clone_tree(self.sets[index % len(self.sets)]))

    def _sampled(self) -> list[tuple[int, int, int, Any]]:
        return self.every if self.every is not None else self.samples

    def sample_entries(self) -> list[list[Any]]:
        """What goes back to the judge: per sampled call (every call, where there were at most
        ``EVERY_CALL_UP_TO`` of at most ``EVERY_CALL_BYTES`` in all), its index, value set,
        scale, output and (for an operator that writes its arguments) the arguments after it."""
        entries = []
        for index, values, scaled, output in self._sampled():
            output, arguments = self.after.get(index, (output, None))
            entries.append([index, values, scaled, output, arguments])
        return entries

    def _values_for(self, index: int) -> int:
        """The value set call ``index`` gets: ``(i % n + i // n) % n``."""
        n = len(self.sets)
        return (index % n + index // n) % n

    def __call__(self) -> None:
        index = self.count
        target = index % len(self.sets)
        before, threads = self.counter.count, threading.active_count()
        output = self.kernel(*self.sets[target])
        self.count += 1
        if self.counter.count == before:
            self.launchless += 1
        if threading.active_count() > threads:  # a thread of the call's outlives it
            self.left_running += 1
        prepared = self.prepared_for[target]
        entry = (index, target if prepared < 0 else self._values_for(prepared), prepared,
                 output)
        if self.every is not None:
            self.every_bytes += _nbytes([output] + ([self.sets[target]] if self.written else []))
            if self.count <= EVERY_CALL_UP_TO and self.every_bytes <= EVERY_CALL_BYTES:
                self.every.append(entry)
            else:
                self.every = None
        if len(self.samples) < self.sample_size:
            self.samples.append(entry)
        elif self.sample_size:
            slot = self._random.randrange(index + 1)
            if slot < self.sample_size:
                self.samples[slot] = entry


# Bound when the template imports this module, before any candidate runs: a candidate that
# replaces json.dumps or socket.sendall later does not change what the runner sends (and the
# integrity guard, which covers json and socket, reports the replacement).
_ENCODE = json.JSONEncoder(default=str).encode
_DECODE = json.JSONDecoder().decode
_SENDALL = socket.socket.sendall
_RECV = socket.socket.recv


def _send(channel: socket.socket, message: dict[str, Any]) -> None:
    _SENDALL(channel, (_ENCODE(message) + "\n").encode())


def _send_tampering(channel: socket.socket, reply: dict[str, Any], changed: list[str]) -> None:
    """A tampering reply built without the (maybe replaced) JSON machinery."""
    seq = int(reply.get("seq") or 0)
    nonce = "".join(c for c in str(reply.get("nonce")) if c in "0123456789abcdef")
    what = "".join(c for c in ", ".join(changed[:5]) if c.isalnum() or c in "._, ()")
    _SENDALL(channel, (f'{{"seq": {seq}, "nonce": "{nonce}", "failure": {{"verdict": '
                       f'"{verdicts.TAMPERING}", "message": "the candidate replaced {what}"}}}}'
                       "\n").encode())


def _requests(channel: socket.socket):  # noqa: ANN202 - a generator of requests
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = _RECV(channel, 1 << 20)
            if not chunk:
                return
            buffer += chunk
            if len(buffer) > MAX_REQUEST_BYTES:
                return
        line, _, buffer = buffer.partition(b"\n")
        yield _DECODE(line.decode())


def _device_peak(backend: Any) -> int | None:
    try:
        return backend.device_memory_peak()
    except Exception:  # noqa: BLE001 - a count, never worth a runner's failure
        return None


def serve(channel: socket.socket, config: RunnerConfig, counter: Any, io_dir: str,
          arenas: Any) -> int:
    """Answer the judge's requests until ``exit`` (status 0) or the channel closes (status 3)."""
    try:
        backend = load_backend(config.backend_module, config.backend_name)
        runner = Runner(backend, counter, io_dir, arenas)
    except Exception as error:
        _send(channel, {"type": "startup_failed", "error": f"{type(error).__name__}: {error}",
                        "traceback": traceback.format_exc()})
        return 1
    _send(channel, {"type": "ready", "pid": os.getpid(), "device": runner.device})
    for request in _requests(channel):
        reply: dict[str, Any] = {"seq": request.get("seq"), "nonce": request.get("nonce")}
        if request.get("op") == "exit":
            # The runner's own word on the device memory it held (for scheduling and reports,
            # never for a verdict: the candidate ran in this process and could change it).
            _send(channel, {**reply, "exit": True,
                            "device_peak_bytes": _device_peak(runner.backend)})
            return 0
        try:
            reply.update(runner.handle(request))
        except CandidateFailure as failure:
            reply["failure"] = {"verdict": failure.verdict, "message": failure.message}
        except Exception as error:  # the runner's own part failed on this candidate's output
            # Copying the inputs to the device can run out of its memory: that is no fault of
            # the call, and the pool retries a job that ran out with the device to itself.
            reply["failure"] = {"verdict": verdicts.OOM if classify(error) == verdicts.OOM
                                else verdicts.RUNTIME_ERROR,
                                "message": short_traceback(error, runner.path)}
        changed = runner.changes()  # what the reply is built with must be what it was
        if changed:
            _send_tampering(channel, reply, changed)
        else:
            _send(channel, reply)
    return 3
