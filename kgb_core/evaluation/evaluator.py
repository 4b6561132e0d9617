"""The harness side of evaluation: judge processes, time limits, and verdicts for their deaths.

A judge (``kgb_core.evaluation.judge``) is a child Python process started with the backend's
environment (e.g. ``TRITON_INTERPRET=1``) and without the harness's secrets. It never runs a
candidate: for each one it forks a fresh runner, in the OS sandbox, from a template that has
imported torch and triton already, so no state crosses candidates while the seconds of importing
torch are paid once per judge. A judge is reused between candidates and replaced after a fault
(``verdicts.RESTART_WORKER_AFTER``), after ``max_jobs_per_worker`` jobs, or when reuse is off.
Running out of device memory is no fault of the judge's: the checks beside it held the device
(``--workers-per-device``), its tensors are gone with the evaluation, and a new judge would cost
seconds of CUDA and Triton start-up (10 s on the H100) before the job runs again alone.
The store stays here, in the harness; no judge or runner ever opens it.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from kgb_core.evaluation import harness_verdicts, judge_status, verdicts
from kgb_core.evaluation.device_lock import GATHER_VARIABLE, LOCK_VARIABLE, lock_path
from kgb_core.evaluation.judge import (BASELINES_VARIABLE, RECHECK_VARIABLE,
                                       RETIME_BEFORE_VARIABLE, STACKS_SIGNAL)
from kgb_core.evaluation.limits import describe_exit, kill_group
from kgb_core.evaluation.results import EvalResult, ran_out_of_device_memory
from kgb_core.evaluation.screen import screen_source
from kgb_core.errors import UserError

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.backends import Backend

# Names of variables that look like credentials; a worker never sees them (a candidate could
# otherwise read an API key and send it anywhere its code can reach).
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)


# What the harness waits beyond a candidate's own time limit before it gives up on the judge.
JUDGE_GRACE_S = 60.0


@dataclass
class EvaluationSettings:
    seeds: Sequence[int] = (0, 1)
    timeout_s: float = 300.0
    startup_timeout_s: float = 120.0
    timing: bool = True
    timing_settings: dict[str, Any] = field(default_factory=dict)
    worker_reuse: bool = True
    max_jobs_per_worker: int = 64
    # Files no runner may read, masked in its sandbox: the result store, for one.
    hidden_paths: tuple[str, ...] = ()
    # The static screen first (kgb_core.evaluation.screen). The adversarial corpus turns it off
    # to see what the run-time checks alone make of a candidate: the screen is a first filter,
    # never the only one.
    screen: bool = True
    # For audits only (benchmarks/probe_draw_audit.py): which entry of the probe pool the
    # rewritten-inputs probe and ghost replay take, instead of one at random. A fixed draw is
    # one a candidate can predict: never for a real run.
    probe_draw: int | None = None
    # Each source's options (kgb_core/source_options.py): the judge builds its operators with
    # the ones the harness planned with.
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The device's lock (device_lock.py): judges check side by side and time alone. None: on
    # where the backend's timings measure a chip (a GPU), off for the interpreter.
    device_lock: bool | None = None
    # Stored baselines (baselines.py): the file, or None to keep them only for a judge's life;
    # a stored one measured before ``retime_baselines_before`` (baselines.now()'s form) is
    # measured again; ``baseline_recheck`` of the reused ones are re-timed to watch for drift.
    baselines: str | None = None
    retime_baselines_before: str = ""
    baseline_recheck: float = 0.05
    # Seconds a timing may wait for another to share its drain (``DeviceLock.gather_s``).
    timing_gather_s: float = 0.0


def uses_device_lock(settings: EvaluationSettings, backend: "Backend") -> bool:
    """Whether a backend's judges take their device's lock (device_lock.py) under ``settings``."""
    if settings.device_lock is not None:
        return settings.device_lock
    return bool(backend.timings_measure_hardware)


class WorkerDied(Exception):
    def __init__(self, returncode: int | None, log_tail: str) -> None:
        super().__init__(f"worker exited with {returncode}")
        self.returncode = returncode
        self.log_tail = log_tail


class WorkerTimedOut(Exception):
    pass


def worker_environment(backend_env: dict[str, str], backend_name: str,
                       scratch: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _SECRET_NAME.search(k)}
    if scratch is not None:
        # Files a candidate makes by default land in its scratch folder. Triton's cache stays
        # where it was, so a new worker does not recompile every kernel.
        env.setdefault("TRITON_CACHE_DIR", str(Path.home() / ".triton" / "cache"))
        for name in ("HOME", "TMPDIR", "TMP", "TEMP"):
            env[name] = str(scratch)
    env.update(backend_env)
    env["KGB_WORKER_BACKEND"] = backend_name
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class WorkerProcess:
    """One judge process, the pipe its messages come back on, and its lifeline."""

    def __init__(self, backend_name: str, backend_env: dict[str, str], scratch: Path,
                 startup_timeout_s: float, limits: dict[str, int] | None = None,
                 host_memory_limit: int | None = None,
                 hidden_paths: Sequence[str] = ()) -> None:
        self.scratch = scratch
        self.log_path = scratch / f"judge-{time.time_ns()}.log"
        self._log = open(self.log_path, "wb")
        read_fd, write_fd = os.pipe()
        # The judge ends itself when this pipe closes, which happens when the harness dies.
        lifeline_read, self._lifeline = os.pipe()
        env = worker_environment(backend_env, backend_name, scratch)
        env["KGB_RESULT_FD"] = str(write_fd)
        env["KGB_LIFELINE_FD"] = str(lifeline_read)
        env["KGB_HIDDEN_PATHS"] = os.pathsep.join(hidden_paths)
        # The limits of the runners this judge starts (the judge itself runs no candidate).
        env["KGB_RUNNER_LIMITS"] = json.dumps(limits or {})
        env["KGB_RUNNER_HOST_MEMORY"] = str(host_memory_limit or "")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kgb_core.evaluation.judge"],
            stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT,
            pass_fds=(write_fd, lifeline_read), env=env, cwd=str(scratch),
            start_new_session=True)
        os.close(write_fd)
        os.close(lifeline_read)
        self._read_fd = read_fd
        self._buffer = b""
        self.jobs_done = 0
        try:
            message = self.read_message(startup_timeout_s)
        except (WorkerDied, WorkerTimedOut) as error:
            tail = self.log_tail()
            self.kill()
            raise UserError(f"the {backend_name} evaluation judge failed to start "
                            f"({type(error).__name__}); its log ends with: {tail[-800:]}") from None
        if message.get("type") != "ready":
            self.kill()
            raise UserError(f"the {backend_name} evaluation judge failed to start: "
                            f"{message.get('error', message)}")
        self.info = message

    def log_tail(self, limit: int = 4000) -> str:
        self._log.flush()
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return data[-limit:].decode("utf-8", errors="replace")

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, offset: int) -> str:
        """What the judge wrote to its log past ``offset``."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def read_message(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimedOut()
            ready, _, _ = select.select([self._read_fd], [], [], min(remaining, 1.0))
            if not ready:
                if self.process.poll() is not None:
                    raise WorkerDied(self.process.returncode, self.log_tail())
                continue
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                self.process.wait(timeout=10)
                raise WorkerDied(self.process.returncode, self.log_tail())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def send(self, job: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            self.process.wait(timeout=10)
            raise WorkerDied(self.process.returncode, self.log_tail()) from None

    def kill(self) -> None:
        kill_group(self.process)
        for closer in (self._close_pipe, self._log.close, self._cut_lifeline):
            try:
                closer()
            except OSError:
                pass

    def _cut_lifeline(self) -> None:
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1

    def _close_pipe(self) -> None:
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    def close(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
        self.kill()


class Evaluator:
    """Evaluates candidate sources for one backend; owns the worker and the scratch folder."""

    def __init__(self, backend_name: str, backend_env: dict[str, str],
                 settings: EvaluationSettings, limits: dict[str, int] | None = None,
                 host_memory_limit: int | None = None, emulates: str = "",
                 slot: str = "") -> None:
        self.backend_name = backend_name
        self.emulates = emulates
        self.backend_env = backend_env
        # Where this evaluator's worker runs ("0", "1": a device; "host:1" under Ray), kept
        # with every result it makes; empty for the single unpinned worker of a plain run.
        self.slot = slot
        self.limits = limits or {}
        self.host_memory_limit = host_memory_limit
        self.settings = settings
        self.scratch = Path(tempfile.mkdtemp(prefix=f"kgb-{backend_name}-"))
        self._worker: WorkerProcess | None = None
        self._jobs = 0
        self.worker_starts = 0
        self.worker_info: dict[str, Any] = {}

    @classmethod
    def for_backend(cls, backend: "Backend", settings: EvaluationSettings,
                    device: int | None = None, slot: str | None = None) -> "Evaluator":
        """An evaluator with the backend's worker environment and limits; with ``device``, its
        worker is pinned to that device (``Backend.device_environment``)."""
        from kgb_core.emulation import emulation_environment

        env = {**backend.worker_environment(), **emulation_environment(backend)}
        if device is not None:
            pin = backend.device_environment(device)
            if pin is None:
                raise UserError(f"backend {backend.label} does not say how to pin a worker to "
                                f"one device; run it on one device (leave out --devices)")
            env.update(pin)
            env["KGB_DEVICE_INDEX"] = str(device)
        if uses_device_lock(settings, backend):
            env[LOCK_VARIABLE] = str(lock_path(backend.name, device))
            if settings.timing_gather_s > 0:
                env[GATHER_VARIABLE] = str(settings.timing_gather_s)
        return cls(backend.name, env, settings, backend.worker_limits(),
                   backend.worker_host_memory_limit(), emulates=backend.emulates,
                   slot=slot if slot is not None else ("" if device is None else str(device)))

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> dict[str, Any]:
        """Start a worker now (if none runs) and return what it reported about itself."""
        self._ensure_worker()
        return self.worker_info

    @property
    def worker_pid(self) -> int | None:
        return self._worker.process.pid if self._worker is not None else None

    def _ensure_worker(self) -> WorkerProcess:
        if self._worker is None:
            from kgb_core.source_options import to_environment

            environment = {**self.backend_env, **to_environment(self.settings.source_options),
                           **self._baseline_environment()}
            self._worker = WorkerProcess(self.backend_name, environment, self.scratch,
                                         self.settings.startup_timeout_s, self.limits,
                                         self.host_memory_limit, self.settings.hidden_paths)
            self.worker_starts += 1
            self.worker_info = self._worker.info
        return self._worker

    def _baseline_environment(self) -> dict[str, str]:
        settings = self.settings
        if not settings.baselines:
            return {}
        return {BASELINES_VARIABLE: str(settings.baselines),
                RETIME_BEFORE_VARIABLE: settings.retime_baselines_before,
                RECHECK_VARIABLE: str(settings.baseline_recheck)}

    def _judge_wait_s(self) -> float:
        """How long the harness waits for a job's result: the candidate's limit, the judge's
        grace, and where judges share the device, as long again for the time this one may
        wait for the device (the judge moves the candidate's deadline on by it)."""
        shared = LOCK_VARIABLE in self.backend_env
        return self.settings.timeout_s * (2 if shared else 1) + JUDGE_GRACE_S

    def _retire_worker(self, *, kill: bool) -> None:
        if self._worker is not None:
            self._worker.kill() if kill else self._worker.close()
            self._worker = None

    def evaluate(self, op_id: str, source: str, *, method: str = "", sample: int = 0,
                 seeds: Sequence[int] | None = None) -> EvalResult:
        """One candidate; ``seeds``, where given, replace the settings' for this one alone (a
        service's request that names its own seed)."""
        started = time.monotonic()
        result = self._evaluate(op_id, source, seeds)
        result.method, result.sample = method, sample
        result.emulates = self.emulates  # every path, the worker's and the harness's own
        result.evaluated_on = self.slot
        result.duration_s = time.monotonic() - started
        return result

    def _evaluate(self, op_id: str, source: str, seeds: Sequence[int] | None = None) -> EvalResult:
        finding = screen_source(source) if self.settings.screen else None
        if finding is not None:
            message = finding.message + (f" (line {finding.line})" if finding.line and
                                         "line" not in finding.message else "")
            return EvalResult(op=op_id, backend=self.backend_name, verdict=finding.verdict,
                              message=message)
        self._jobs += 1
        job = {"job": self._jobs, "op": op_id, "source": source,
               "seeds": list(self.settings.seeds if seeds is None else seeds),
               "timing": self.settings.timing,
               "timing_settings": self.settings.timing_settings,
               "timeout_s": self.settings.timeout_s, "probe_draw": self.settings.probe_draw}
        worker = self._ensure_worker()
        pending = EvalResult(op=op_id, backend=self.backend_name, verdict=verdicts.PASS)
        try:
            worker.send(job)
            # The judge keeps the candidate's deadline itself; this one is for the judge.
            message = worker.read_message(self._judge_wait_s())
        except WorkerTimedOut:
            tail = worker.log_tail()
            self._retire_worker(kill=True)
            return harness_verdicts.timed_out(pending, self._judge_wait_s(),
                                              who="the judge", log_tail=tail)
        except WorkerDied as died:
            self._retire_worker(kill=True)
            return harness_verdicts.died(pending, f"the judge process "
                                         f"{describe_exit(died.returncode)}", died.returncode,
                                         log_tail=died.log_tail)
        if message.get("type") == "result" and message.get("job") == self._jobs:
            result = EvalResult.from_dict(message["result"])
        elif message.get("type") == "result":
            result = harness_verdicts.harness_fault(
                pending, f"the judge answered job {message.get('job')} for job {self._jobs}")
        else:
            result = harness_verdicts.harness_fault(
                pending, message.get("error", "unknown judge message"),
                log_tail=message.get("traceback", ""))
        worker.jobs_done += 1
        suspect = (result.verdict in verdicts.RESTART_WORKER_AFTER
                   and not ran_out_of_device_memory(result))
        if (suspect or not self.settings.worker_reuse
                or worker.jobs_done >= self.settings.max_jobs_per_worker):
            self._retire_worker(kill=suspect)
        return result

    def judge_status(self) -> dict[str, Any]:
        """What the judge wrote it is doing (judge_status.py): stage, device lock, since when."""
        return judge_status.read(self.scratch) if self._worker is not None else {}

    def ask_for_stacks(self) -> int | None:
        """Have the judge write every thread's stack to its log (faulthandler, on
        ``judge.STACKS_SIGNAL``) without stopping it; the log's offset to read them from
        (``stacks_since``), or None where no judge runs. For a sweep whose judges stopped
        finishing jobs: what each one waits on."""
        worker = self._worker
        if worker is None or worker.process.poll() is not None:
            return None
        start = worker.log_size()
        try:
            os.kill(worker.process.pid, STACKS_SIGNAL)
        except (ProcessLookupError, PermissionError):
            return None
        return start

    def stacks_since(self, offset: int | None) -> str:
        worker = self._worker
        return worker.log_since(offset) if worker is not None and offset is not None else ""

    def kill_worker(self) -> None:
        """Kill the worker's process group from any thread (an aborted sweep): a thread that
        waits in ``evaluate`` sees the worker die and returns; nothing else is touched here."""
        worker = self._worker
        if worker is not None and worker.process.poll() is None:
            try:
                os.killpg(worker.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        self._retire_worker(kill=False)
        shutil.rmtree(self.scratch, ignore_errors=True)
