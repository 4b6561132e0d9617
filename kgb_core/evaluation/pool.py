"""The harness side of evaluation: worker processes, time limits, and verdicts for their deaths.

A worker is a child Python process started with the backend's environment (e.g.
``TRITON_INTERPRET=1``) and without the harness's secrets. It is reused between candidates,
since importing torch and triton costs seconds, and replaced after any fault
(``verdicts.RESTART_WORKER_AFTER``), after ``max_jobs_per_worker`` jobs, or when reuse is off.
"""

from __future__ import annotations

import functools
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

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.results import EvalResult
from kgb_core.evaluation.screen import screen_source
from kgb_core.errors import UserError

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.backends import Backend

# Names of variables that look like credentials; a worker never sees them (a candidate could
# otherwise read an API key and send it anywhere its code can reach).
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)


@dataclass
class EvaluationSettings:
    seeds: Sequence[int] = (0, 1)
    timeout_s: float = 300.0
    startup_timeout_s: float = 120.0
    timing: bool = True
    timing_settings: dict[str, Any] = field(default_factory=dict)
    worker_reuse: bool = True
    max_jobs_per_worker: int = 64


class WorkerDied(Exception):
    def __init__(self, returncode: int | None, log_tail: str) -> None:
        super().__init__(f"worker exited with {returncode}")
        self.returncode = returncode
        self.log_tail = log_tail


class WorkerTimedOut(Exception):
    pass


class WorkerOutOfMemory(Exception):
    def __init__(self, resident_bytes: int, limit_bytes: int, log_tail: str) -> None:
        super().__init__(f"worker resident memory {resident_bytes} over {limit_bytes}")
        self.resident_bytes = resident_bytes
        self.limit_bytes = limit_bytes
        self.log_tail = log_tail


def resident_bytes(pid: int) -> int:
    """The process's resident set size (Linux), 0 where it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


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


# Limits every worker gets: no core files (a crashing candidate must not fill the disk) and
# no file larger than 1 GiB.
BASE_LIMITS = {"RLIMIT_CORE": 0, "RLIMIT_FSIZE": 1 << 30}


def apply_limits(limits: dict[str, int]) -> None:
    """Runs in the child between fork and exec; a limit the OS refuses is left as it was."""
    import resource

    for name, value in {**BASE_LIMITS, **limits}.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


class WorkerProcess:
    """One child process and the pipe its messages come back on."""

    def __init__(self, backend_name: str, backend_env: dict[str, str], scratch: Path,
                 startup_timeout_s: float, limits: dict[str, int] | None = None,
                 host_memory_limit: int | None = None) -> None:
        self.scratch = scratch
        self.host_memory_limit = host_memory_limit
        self.log_path = scratch / f"worker-{time.time_ns()}.log"
        self._log = open(self.log_path, "wb")
        read_fd, write_fd = os.pipe()
        env = worker_environment(backend_env, backend_name, scratch)
        env["KGB_RESULT_FD"] = str(write_fd)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kgb_core.evaluation.worker"],
            stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT,
            pass_fds=(write_fd,), env=env, cwd=str(scratch), start_new_session=True,
            preexec_fn=functools.partial(apply_limits, limits or {}),
        )
        os.close(write_fd)
        self._read_fd = read_fd
        self._buffer = b""
        self.jobs_done = 0
        try:
            message = self.read_message(startup_timeout_s)
        except (WorkerDied, WorkerTimedOut) as error:
            tail = self.log_tail()
            self.kill()
            raise UserError(f"the {backend_name} evaluation worker failed to start "
                            f"({type(error).__name__}); its log ends with: {tail[-800:]}") from None
        if message.get("type") != "ready":
            self.kill()
            raise UserError(f"the {backend_name} evaluation worker failed to start: "
                            f"{message.get('error', message)}")
        self.info = message

    def log_tail(self, limit: int = 4000) -> str:
        self._log.flush()
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return data[-limit:].decode("utf-8", errors="replace")

    def read_message(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimedOut()
            tick = 0.25 if self.host_memory_limit else 1.0
            ready, _, _ = select.select([self._read_fd], [], [], min(remaining, tick))
            if not ready:
                if self.process.poll() is not None:
                    raise WorkerDied(self.process.returncode, self.log_tail())
                if self.host_memory_limit:
                    resident = resident_bytes(self.process.pid)
                    if resident > self.host_memory_limit:
                        raise WorkerOutOfMemory(resident, self.host_memory_limit,
                                                self.log_tail())
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
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()
        for closer in (self._close_pipe, self._log.close):
            try:
                closer()
            except OSError:
                pass

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
        env = dict(backend.worker_environment())
        if device is not None:
            pin = backend.device_environment(device)
            if pin is None:
                raise UserError(f"backend {backend.label} does not say how to pin a worker to "
                                f"one device; run it on one device (leave out --devices)")
            env.update(pin)
            env["KGB_DEVICE_INDEX"] = str(device)
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
            self._worker = WorkerProcess(self.backend_name, self.backend_env, self.scratch,
                                         self.settings.startup_timeout_s, self.limits,
                                         self.host_memory_limit)
            self.worker_starts += 1
            self.worker_info = self._worker.info
        return self._worker

    def _retire_worker(self, *, kill: bool) -> None:
        if self._worker is not None:
            self._worker.kill() if kill else self._worker.close()
            self._worker = None

    def evaluate(self, op_id: str, source: str, *, method: str = "", sample: int = 0) -> EvalResult:
        started = time.monotonic()
        result = self._evaluate(op_id, source)
        result.method, result.sample = method, sample
        result.emulates = self.emulates  # every path, the worker's and the harness's own
        result.evaluated_on = self.slot
        result.duration_s = time.monotonic() - started
        return result

    def _evaluate(self, op_id: str, source: str) -> EvalResult:
        finding = screen_source(source)
        if finding is not None:
            message = finding.message + (f" (line {finding.line})" if finding.line and
                                         "line" not in finding.message else "")
            return EvalResult(op=op_id, backend=self.backend_name, verdict=finding.verdict,
                              message=message)
        self._jobs += 1
        candidate_path = self.scratch / f"candidate_{self._jobs}.py"
        candidate_path.write_text(source)
        job = {"job": self._jobs, "op": op_id, "candidate_path": str(candidate_path),
               "seeds": list(self.settings.seeds), "timing": self.settings.timing,
               "timing_settings": self.settings.timing_settings}
        worker = self._ensure_worker()
        try:
            worker.send(job)
            message = worker.read_message(self.settings.timeout_s)
        except WorkerTimedOut:
            tail = worker.log_tail()
            self._retire_worker(kill=True)
            return EvalResult(op=op_id, backend=self.backend_name, verdict=verdicts.TIMEOUT,
                              message=f"no answer within {self.settings.timeout_s:g} s; the "
                                      f"worker was killed", log_tail=tail)
        except WorkerOutOfMemory as hog:
            self._retire_worker(kill=True)
            return EvalResult(op=op_id, backend=self.backend_name, verdict=verdicts.OOM,
                              message=f"the worker held {hog.resident_bytes / (1 << 30):.1f} GiB "
                                      f"of host memory, over the limit of "
                                      f"{hog.limit_bytes / (1 << 30):.1f} GiB; it was killed",
                              log_tail=hog.log_tail)
        except WorkerDied as died:
            self._retire_worker(kill=True)
            hint = (" (the system's out-of-memory killer sends SIGKILL)"
                    if died.returncode == -signal.SIGKILL else "")
            return EvalResult(op=op_id, backend=self.backend_name, verdict=verdicts.CRASHED,
                              message=f"the worker process {describe_exit(died.returncode)}{hint}",
                              log_tail=died.log_tail)
        finally:
            candidate_path.unlink(missing_ok=True)
        if message.get("type") == "result":
            result = EvalResult.from_dict(message["result"])
        else:
            result = EvalResult(op=op_id, backend=self.backend_name,
                                verdict=verdicts.HARNESS_ERROR,
                                message=message.get("error", "unknown worker message"),
                                log_tail=message.get("traceback", ""))
        worker.jobs_done += 1
        if (result.verdict in verdicts.RESTART_WORKER_AFTER or not self.settings.worker_reuse
                or worker.jobs_done >= self.settings.max_jobs_per_worker):
            self._retire_worker(kill=result.verdict in verdicts.RESTART_WORKER_AFTER)
        return result

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
