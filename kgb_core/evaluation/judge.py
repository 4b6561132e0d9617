"""The judge process: ``python -m kgb_core.evaluation.judge``; it never runs candidate code.

The harness starts one per device slot. It loads every plugin (sources, references, tolerances,
held-out cases live here and nowhere else), sets the device up for the references, starts the
runner template in the sandbox, then reads one JSON job per line on stdin. For each job it forks
a fresh runner from the template, writes the candidate into the runner's folder, runs the
checks (``kgb_core.evaluation.checker``), makes the runner exit, and writes one JSON result per
job to the file descriptor ``KGB_RESULT_FD``. Results are only ever written here, never by a
runner, which has no descriptor of the judge's.

``KGB_LIFELINE_FD`` is a pipe whose other end only the harness holds: when the harness dies
(SIGKILL, a timeout around ``kgb eval``), the pipe closes and the judge ends itself and its
sandbox (bubblewrap's ``--die-with-parent``), so nothing outlives the harness.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import platform
import signal
import sys
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, Sequence, TextIO

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.evaluation.baselines import BaselineCache
    from kgb_core.evaluation.device_lock import DeviceLock, NoLock

PROTOCOL_VERSION = 2
# What the judge waits for a fresh runner to set its device up (the CUDA context, mostly).
RUNNER_STARTUP_S = 120.0
# Variables of the judge's own that a runner never sees.
JUDGE_ONLY = ("KGB_RESULT_FD", "KGB_LIFELINE_FD", "KGB_HIDDEN_PATHS", "KGB_RUNNER_",
              "KGB_JUDGE_")
# The harness's word on stored baselines (baselines.py): the file, the moment before which a
# stored one is measured again, the fraction re-timed to watch for drift.
BASELINES_VARIABLE = "KGB_JUDGE_BASELINES"
RETIME_BEFORE_VARIABLE = "KGB_JUDGE_RETIME_BEFORE"
RECHECK_VARIABLE = "KGB_JUDGE_BASELINE_RECHECK"
# The signal on which a judge writes its threads' stacks to its log.
STACKS_SIGNAL = signal.SIGUSR1


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message, default=str) + "\n")
    channel.flush()


def _watch_lifeline() -> None:
    """End this process group when the harness's end of the lifeline closes."""
    fd = os.environ.get("KGB_LIFELINE_FD")
    if not fd:
        return

    def watch() -> None:
        try:
            while os.read(int(fd), 1):
                pass
        except OSError:
            pass
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="kgb-lifeline", daemon=True).start()


def _warm_seed_cache(backend: Any, seed: str) -> None:
    """Fill ``seed``, a Triton cache folder, with what the backend compiles for every runner
    (copied into each runner's own cache when it is forked): made by the judge, so no runner's
    writes ever reach another."""
    before = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = seed
    try:
        backend.warm_runner_cache()
    finally:
        if before is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = before


def _not_dumpable() -> None:
    """No runner may read this process's memory or descriptors through /proc or ptrace."""
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


class Judge:
    """Checks candidates against a registry's operators; starts runners, never runs a candidate.

    ``main`` makes one from its environment in the judge process; tests and tools may make one
    in their own process (``Judge(backend, registry)``), which then plays the judge there.
    """

    def __init__(self, backend: Any, registry: Any, *, host_backend: Any = None,
                 hidden_paths: Sequence[str] = (), runner_limits: dict[str, int] | None = None,
                 runner_host_memory: int | None = None,
                 baselines: "BaselineCache | None" = None,
                 device_lock: "DeviceLock | NoLock | None" = None) -> None:
        """``baselines`` and ``device_lock``: the judge process's come from the harness's
        variables (``from_environment``); one made in a test's process keeps its baselines
        for its life and takes no lock unless given them."""
        from kgb_core.evaluation import sandbox
        from kgb_core.evaluation.baselines import BaselineCache
        from kgb_core.evaluation.device_lock import NoLock
        from kgb_core.timing import Timers

        self.registry = registry
        self.backend = backend
        self.host_backend = host_backend or backend
        self.tool = sandbox.find_sandbox()
        # The device first: on a GPU its files (/dev/nvidia-uvm) may exist only once it is set
        # up, and they are bound into the sandbox when the template starts.
        self.device = self.backend.setup()
        self.backend_module = registry.backend_module(self.host_backend)
        source_modules = registry.modules_providing("source")
        self.masked = sandbox.source_locations(source_modules, keep=[self.backend_module])
        self.masked += [p for path in hidden_paths for p in (path, path + "-wal", path + "-shm",
                                                             path + "-journal")]
        self.masked += [os.path.realpath(path) for name in registry.names("source")
                        for path in registry.source(name).hidden_paths()]
        self.device_lock = device_lock if device_lock is not None else NoLock()
        self.baselines = baselines if baselines is not None else BaselineCache()
        if self.baselines.store is not None and not self.tool.sandboxed:
            # Unsandboxed, a candidate could rewrite the stored baselines and inflate every
            # later speedup (tests/test_baselines.py): this judge keeps its own only.
            self.baselines.store.close()
            self.baselines = BaselineCache()
        # No runner reads the stored baselines or holds the device's lock.
        stored = self.baselines.store
        if stored is not None:
            stored.open()  # only a path that exists can be masked
            self.masked += [str(stored.path) + suffix for suffix in ("", "-wal", "-shm")]
        if getattr(self.device_lock, "path", None) is not None:
            self.masked.append(str(self.device_lock.path.parent))
        self.devices = sandbox.device_paths(self.host_backend.sandbox_device_files())
        self.runner_limits = (runner_limits if runner_limits is not None
                              else self.backend.worker_limits())
        self.runner_host_memory = (runner_host_memory if runner_host_memory is not None
                                   else self.backend.worker_host_memory_limit())
        self.timers = Timers(self.backend)
        self.template = None
        import tempfile

        self.seed_cache = tempfile.mkdtemp(prefix="kgb-triton-seed-")
        # The template imports torch while this process imports it and compiles the seed
        # cache: seconds each, side by side.
        self._start_template(wait=False)
        import torch  # noqa: F401 - the references need it; imported now, in parallel

        _warm_seed_cache(self.backend, self.seed_cache)
        self.template.wait_ready()
        # What the judge holds from now on (torch, triton, the registry: millions of objects)
        # is left out of the collector's sight: the collection before each candidate's device
        # cache is emptied then scans only what evaluations made (a full one cost 88 ms a
        # candidate on the H100, results/h100-profile-1731123.txt).
        gc.freeze()

    @classmethod
    def from_environment(cls) -> "Judge":
        """The judge process's judge: backend, emulation and limits from the harness's variables."""
        from kgb_core.emulation import WORKER_EMULATES_VARIABLE, emulating
        from kgb_core.evaluation import device_lock
        from kgb_core.plugins import load_registry
        from kgb_core.source_options import configure, from_environment

        registry = load_registry()
        configure(registry, from_environment())  # the operators the harness planned with
        host = registry.backend(os.environ["KGB_WORKER_BACKEND"])
        backend = host
        if os.environ.get(WORKER_EMULATES_VARIABLE):
            backend = emulating(host, registry.backend(os.environ[WORKER_EMULATES_VARIABLE]))
        memory = os.environ.get("KGB_RUNNER_HOST_MEMORY")
        return cls(backend, registry, host_backend=host, baselines=_baselines(backend),
                   device_lock=device_lock.from_environment(),
                   hidden_paths=[p for p in os.environ.get("KGB_HIDDEN_PATHS", "")
                                 .split(os.pathsep) if p],
                   runner_limits=json.loads(os.environ["KGB_RUNNER_LIMITS"])
                   if "KGB_RUNNER_LIMITS" in os.environ else None,
                   runner_host_memory=int(memory) if memory else None)

    def _start_template(self, wait: bool = True) -> None:
        from kgb_core.evaluation.runners import RunnerTemplate

        if self.template is not None:
            self.template.close()
        quirks = self.backend.quirks
        config = {"backend_module": self.backend_module, "backend_name": self.host_backend.name,
                  "max_num_warps": quirks.max_num_warps, "max_block_size": quirks.max_block_size,
                  "limits": self.runner_limits, "host_memory_limit": self.runner_host_memory}
        env = {k: v for k, v in os.environ.items() if not k.startswith(JUDGE_ONLY)}
        self.template = RunnerTemplate(self.tool, config, env, devices=self.devices,
                                       masked=self.masked, startup_timeout_s=RUNNER_STARTUP_S,
                                       seed_cache=self.seed_cache, wait=wait)

    def close(self) -> None:
        if self.template is not None:
            self.template.close()
            self.template = None
        from kgb_core.evaluation.runners import remove_tree

        remove_tree(self.seed_cache)

    def ready(self) -> dict[str, Any]:
        import torch
        import triton

        from kgb_core import emulation

        return {
            "type": "ready",
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "device": self.device,
            "device_name": emulation.device_name(self.backend),
            # The harness's device index this judge is pinned to (None: not pinned).
            "device_index": os.environ.get("KGB_DEVICE_INDEX"),
            "emulates": self.backend.emulates,
            # What the device's gate admits jobs against (devices._DeviceGate.capacity).
            "device_memory_bytes": self.backend.device_memory_total(),
            "sandbox": self.tool.name,
            "sandbox_detail": self.tool.detail,
            "python": platform.python_version(),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "platform": platform.platform(),
        }

    def evaluate(self, job: dict[str, Any]) -> Any:
        """One job of the harness: the operator by its id, the candidate's source."""
        return self.evaluate_spec(self.registry.operator(job["op"]), job["source"],
                                  seeds=job["seeds"], timing=job["timing"],
                                  timing_settings=job.get("timing_settings") or {},
                                  timeout_s=float(job.get("timeout_s") or 300.0),
                                  probe_draw=job.get("probe_draw"))

    def evaluate_spec(self, spec: Any, source: str, *, seeds: Sequence[int], timing: bool,
                      timing_settings: dict[str, Any] | None = None,
                      timeout_s: float = 300.0, probe_draw: int | None = None) -> Any:
        """Check ``source`` as a candidate for ``spec`` in a fresh runner; the result."""
        from kgb_core.evaluation import harness_verdicts
        from kgb_core.evaluation.checker import CheckSettings, Evaluation
        from kgb_core.evaluation.runners import (ChannelViolation, RunnerDied, RunnerTimedOut,
                                                 TemplateFailed)

        timing_settings = timing_settings or {}
        deadline = time.monotonic() + timeout_s
        self.backend.device_memory_peak(reset=True)  # this candidate's count starts here
        if not self.template.alive:
            self._start_template()
        # A runner's start and end (its device context made and torn down, memory freed) are
        # device work too: never while another judge times a kernel. The start holds the lock
        # from the fork until the runner says it is ready.
        starting = contextlib.ExitStack()
        starting.enter_context(self.device_lock.shared())
        steps: dict[str, float] = {}  # the runner's start and end: seconds held shared
        spawned = time.perf_counter()
        starting.callback(lambda: steps.update(
            {"runner start": time.perf_counter() - spawned}))
        try:
            channel = self.template.spawn(RUNNER_STARTUP_S)
        except TemplateFailed:
            self._start_template()  # once more, from a new template
            try:
                channel = self.template.spawn(RUNNER_STARTUP_S)
            except BaseException:
                starting.close()
                raise
        except BaseException:
            starting.close()
            raise
        try:
            evaluation = Evaluation(spec, self.backend, self.device,
                                    self.timers.get(timing_settings), channel,
                                    CheckSettings(seeds=seeds, timing=timing,
                                                  probe_draw=probe_draw),
                                    timing_settings, deadline, baselines=self.baselines,
                                    device_lock=self.device_lock)
        except BaseException:
            starting.close()
            channel.close()
            self._clear_work_folder(channel)
            raise
        result = evaluation.result
        try:
            with starting:
                channel.wait_ready(max(1.0, deadline - time.monotonic()))
            channel.write_file("candidate.py", source.encode())
            result = evaluation.run("candidate.py")
            channel.finish()
        except RunnerTimedOut:
            result = harness_verdicts.timed_out(result, timeout_s, log_tail=channel.log_tail())
        except RunnerDied as died:
            if died.killed_for_memory:
                result = harness_verdicts.out_of_memory(
                    result, died.killed_for_memory, self.runner_host_memory,
                    log_tail=channel.log_tail())
            else:
                result = harness_verdicts.died(result, str(died), died.returncode,
                                               log_tail=channel.log_tail())
        except ChannelViolation as violation:
            result = harness_verdicts.forged_channel(result, str(violation))
        except TemplateFailed as failure:  # it died while this candidate's runner lived
            result = harness_verdicts.died(result, f"{failure} while this candidate ran",
                                           None, log_tail=channel.log_tail())
        finally:
            starting.close()  # where the runner never got as far as ready
            with self.device_lock.shared():
                ending = time.perf_counter()
                ended = channel.close()
                del evaluation  # its tensors (inputs, references) go before the cache is emptied
                judge_peak = self.backend.device_memory_peak()
                self.backend.release_cached_memory()
                steps["runner end"] = time.perf_counter() - ending
            # Also where the job raised (a harness error): the next runner's look for files
            # written outside its folder would otherwise find this one's and blame its candidate.
            written = self._clear_work_folder(channel)
        if written:
            result = harness_verdicts.wrote_outside(result, written)
        elif ended is not None and ended.strays and result.passed:
            result = harness_verdicts.left_processes(result, ended.strays)
        result.sandbox = self.tool.name
        # The runner's start and end hold the device shared too (EvalResult.shared_steps).
        result.shared_steps.update({name: [1, round(seconds, 4), round(seconds, 4)]
                                    for name, seconds in steps.items()})
        if judge_peak is not None:  # the stages reset the count: the job's peak is theirs too
            judge_peak = max([judge_peak, *result.judge_peak_by_stage.values()])
        result.device_peak_judge_bytes = judge_peak
        result.device_peak_runner_bytes = channel.reported_device_peak()
        return result

    def _clear_work_folder(self, channel: Any) -> list[str]:
        """Remove the ended runner's folder, and anything it wrote beside it: the names of
        the latter."""
        written = self.template.stray_files(channel.folder)
        channel.remove_folder()
        return written


def _baselines(backend: Any) -> "BaselineCache":
    """The judge process's baselines: stored where the harness named a file, keyed by what
    else the timings depend on (the backend, the device's name, torch's and Triton's
    versions)."""
    from kgb_core.evaluation.baselines import BaselineCache, BaselineStore

    path = os.environ.get(BASELINES_VARIABLE)
    if not path:
        return BaselineCache()

    def environment() -> dict[str, Any]:  # asked once the device is set up
        import torch
        import triton

        from kgb_core import emulation

        return {"backend": backend.name, "emulates": backend.emulates,
                "device_name": emulation.device_name(backend),
                "torch": torch.__version__, "triton": triton.__version__}

    return BaselineCache(store=BaselineStore(path), environment=environment,
                         retime_before=os.environ.get(RETIME_BEFORE_VARIABLE, ""),
                         recheck=float(os.environ.get(RECHECK_VARIABLE) or 0.0))


def _write_stacks(signum: int, frame: Any) -> None:
    """Every thread's stack, innermost call first, to the log (stderr), as faulthandler
    writes them. Run by Python in the main thread between two bytecodes, while every other
    thread's frames stand still: faulthandler's own dump reads them from inside the signal,
    while they run, and one of eight judges asked so on the H100 died of SIGSEGV, its job
    stored as crashed (benchmarks/RESULTS.md, twenty-third session). A main thread inside a
    long C call (a device synchronize) writes them once it returns."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    for ident, top in sys._current_frames().items():
        lines = [f'  File "{where.filename}", line {where.lineno} in {where.name}'
                 for where in reversed(traceback.extract_stack(top))]
        parts.append(f"Thread {ident:#018x} ({names.get(ident, 'not a Python thread')}, "
                     f"most recent call first):\n" + "\n".join(lines))
    sys.stderr.write("\n\n".join(parts) + "\n")
    sys.stderr.flush()


def main() -> int:
    channel = os.fdopen(int(os.environ["KGB_RESULT_FD"]), "w", buffering=1)
    _watch_lifeline()
    from kgb_core.evaluation import judge_status

    judge_status.configure(os.path.join(os.getcwd(), judge_status.STATUS_NAME))
    # SIGUSR1 writes every thread's stack to the judge's log (Evaluator.ask_for_stacks): what a
    # stalled sweep's judges wait on, read without stopping them.
    signal.signal(STACKS_SIGNAL, _write_stacks)
    _not_dumpable()
    try:
        judge = Judge.from_environment()
        ready = judge.ready()
    except Exception as error:  # the harness turns this into a clear error for the user
        _send(channel, {"type": "startup_failed", "error": f"{type(error).__name__}: {error}",
                        "traceback": traceback.format_exc()})
        return 1
    _send(channel, ready)
    for line in sys.stdin:
        if not line.strip():
            continue
        _send(channel, answer(judge, json.loads(line)))
    judge.close()
    return 0


def answer(judge: Judge, job: dict[str, Any]) -> dict[str, Any]:
    """The message for one job: its result, or the harness error it raised. After an error,
    the device cache is emptied once more: the failed evaluation's tensors lived on in the
    traceback's frames past the judge's own emptying (``evaluate_spec``), and a judge kept
    after running out of memory would otherwise hold them reserved while it waits for its
    next job (on an H100, one process held 23.7 GiB while others ran out)."""
    try:
        result = judge.evaluate(job)
        return {"type": "result", "job": job["job"], "result": result.to_dict()}
    except Exception as error:
        failed = {"type": "harness_error", "job": job.get("job"),
                  "error": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
    gc.collect()  # the traceback and its frames are gone here: what they held goes
    judge.backend.release_cached_memory()
    return failed


if __name__ == "__main__":
    sys.exit(main())
