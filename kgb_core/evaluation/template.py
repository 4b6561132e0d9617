"""The runner template: ``python -P -m kgb_core.evaluation.template``, inside the sandbox.

Importing torch and triton costs seconds; a fresh process per candidate must not pay it. The
template pays it once: it imports torch, triton, the runner's modules and the backend's module,
installs the launch counter and warms the dispatch-mode machinery, and never initialises the
device (a CUDA context does not survive ``fork``). Then, for each candidate, the judge asks it to
``spawn``: it forks, and the child becomes that candidate's runner (``kgb_core.evaluation.runner``)
with one socket to the judge and the two shared-memory arenas the judge made for it
(``kgb_core.evaluation.arena``), passed over the control socket, as its only descriptors beside
its log. Nothing a runner does reaches the next one: each is a new process, its scratch folder
is new, and when it ends the template kills whatever it left running and reports how it ended.

The template itself is never a candidate's: it is not dumpable (no ``ptrace``, no
``/proc/<pid>/mem`` for a runner of the same user), it runs no candidate code, and it is
single-threaded so that ``fork`` is safe.

Control protocol (JSON lines on the socket in ``KGB_TEMPLATE_FD``): the template says
``ready``; the judge sends ``spawn`` (with the runner's socket and its arenas attached,
``scratch``, ``io``), answered by ``spawned``; ``kill`` ends the current runner; when a runner
ends, the template sends ``exited`` with its wait status, whether it was killed for host
memory, and how many processes it left behind.
"""

from __future__ import annotations

import ctypes
import fcntl
import importlib
import json
import os
import select
import shutil
import signal
import socket
import sys
import time
from typing import Any

from kgb_core.evaluation.limits import MAX_FILE_BYTES, apply_limits, resident_bytes

# Modules a process's first launch imports (Triton 3.6 to 3.9: the argument specialisation
# imports gluon; torch.broadcast_shapes, in many kernels' host code, imports sympy), imported
# in the template instead. Absent ones are skipped.
_LAZY_IMPORTS = ("triton.experimental.gluon", "triton.language.extra.libdevice",
                 # torch.broadcast_shapes imports it (and sympy) on first use: 0.27 s a runner
                 "torch.fx.experimental.symbolic_shapes")
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
CHANNEL_FD = 3  # the runner's socket, in the runner
# Its two arenas (kgb_core.evaluation.arena): requests, then replies.
ARENA_FDS = (CHANNEL_FD + 1, CHANNEL_FD + 2)
# Descriptors that come with a spawn: the channel, then the arenas.
SPAWN_FDS = 1 + len(ARENA_FDS)


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _preload(config: dict[str, Any]) -> Any:
    """Everything a runner needs imported, and the launch counter installed; no device work."""
    import torch
    import triton  # noqa: F401 - imported once here, for every runner

    from kgb_core import timing  # noqa: F401
    from kgb_core.evaluation import arena, exchange, integrity, runner  # noqa: F401
    # A module-class candidate's adapter and what it calls (kgb_core/module_contract.py):
    # imported before the integrity guard's record, like every kgb module a runner uses.
    from kgb_core import module_contract  # noqa: F401
    import torch.func  # noqa: F401
    from kgb_core.evaluation.launches import LaunchCounter
    from kgb_core.evaluation.recorder import Recording, install_thread_recording

    backend = runner.load_backend(config["backend_module"], config["backend_name"])
    backend.install_runtime_shims()
    for lazy in _LAZY_IMPORTS:  # imported by a process's first launch: 80 ms in every runner
        try:
            importlib.import_module(lazy)
        except ImportError:
            pass
    counter = LaunchCounter(max_num_warps=config.get("max_num_warps"),
                            max_block_size=config.get("max_block_size"))
    counter.install()
    install_thread_recording()
    # The recording's first op: what it sets up on first use is paid here, once, on a host
    # tensor (no device is touched), not in every runner. (It once imported torch._dynamo,
    # 1 s; the op recorder no longer does, recorder._dynamo_disabled_once_imported.)
    with Recording():
        torch.empty(1).tolist()
    before = _threads()
    backend.warm_template()
    if _threads() > before:
        raise RuntimeError(f"{type(backend).__name__}.warm_template started threads in the "
                           f"runner template ({before} before, {_threads()} after): fork would "
                           f"copy a process whose other threads may hold locks")
    return counter


def _threads() -> int:
    """The process's OS threads (1 where /proc cannot say)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _all_pids() -> set[int]:
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def _live_processes() -> dict[int, tuple[str, int]]:
    """Every process this namespace shows that is not a zombie: its state and session id."""
    found: dict[int, tuple[str, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            found[int(name)] = (fields[0], int(fields[3]))
    return found


class Template:
    def __init__(self, control: socket.socket, config: dict[str, Any], counter: Any) -> None:
        self.control = control
        self.config = config
        self.counter = counter
        self.sandboxed = bool(config.get("sandboxed"))
        self.host_memory_limit = config.get("host_memory_limit")
        self.limits = config.get("limits") or {}
        self.child: int | None = None
        self.child_fd: int | None = None  # the runner's pidfd, where the kernel has them
        self.child_scratch = ""
        self.killed_for_memory = 0
        self._buffer = b""
        self._fds: list[int] = []

    def send(self, message: dict[str, Any]) -> None:
        self.control.sendall((json.dumps(message) + "\n").encode())

    def serve(self) -> int:
        self.send({"type": "ready", "pid": os.getpid(), "sandboxed": self.sandboxed})
        while True:
            # The runner's pidfd wakes this loop the moment the runner exits (the judge waits
            # for that news after every candidate: a quarter-second poll cost 0.12 s a
            # candidate on average); the timeout keeps its memory watched meanwhile.
            watched = [self.control] + ([self.child_fd] if self.child_fd is not None else [])
            ready, _, _ = select.select(watched, [], [], 0.25 if self.child else None)
            if self.control in ready:
                data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 4)
                if not data:
                    self._end_child()
                    return 0
                self._fds.extend(fds)
                self._buffer += data
                while b"\n" in self._buffer:
                    line, _, self._buffer = self._buffer.partition(b"\n")
                    self._handle(json.loads(line))
            if self.child is not None:
                self._watch_child()

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "spawn":
            handed, self._fds = self._fds[:SPAWN_FDS], self._fds[SPAWN_FDS:]
            if self.child is not None or len(handed) != SPAWN_FDS:
                for fd in handed:
                    os.close(fd)
                self.send({"type": "error", "error": "a runner is still alive"
                           if self.child is not None else "a spawn without its descriptors"})
                return
            self._spawn(handed, message)
        elif kind == "kill" and self.child is not None:
            self._kill_all()

    def _spawn(self, handed: list[int], message: dict[str, Any]) -> None:
        scratch = message["scratch"]
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                code = self._become_runner(handed, message)
            finally:
                os._exit(code)
        for fd in handed:
            os.close(fd)
        self.child, self.child_scratch, self.killed_for_memory = pid, scratch, 0
        try:
            self.child_fd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # Linux before 5.3, or no such call here: polled
            self.child_fd = None
        self.send({"type": "spawned", "pid": pid})

    def _become_runner(self, handed: list[int], message: dict[str, Any]) -> int:
        parent = os.getppid()
        os.setsid()
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the template died between fork and prctl
            return 71
        scratch = message["scratch"]
        log = os.open(os.path.join(scratch, "runner.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        # The channel and the arenas to their places (by way of numbers above them all, so
        # that none lands on another before it has moved), then every other descriptor goes:
        # the control socket, the template's files.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in handed]
        for fd, place in zip(moved, (CHANNEL_FD, *ARENA_FDS)):
            os.dup2(fd, place)
        os.closerange(ARENA_FDS[-1] + 1, 1 << 16)
        os.chdir(scratch)
        triton_cache = os.path.join(scratch, "triton-cache")
        os.makedirs(triton_cache, exist_ok=True)
        for name in ("HOME", "TMPDIR", "TMP", "TEMP"):
            os.environ[name] = scratch
        os.environ["TRITON_CACHE_DIR"] = triton_cache
        # torch remembers its inductor cache folder in the environment the first time it is
        # asked (in the template, under another temporary folder): this runner's is its own.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(scratch, "inductor-cache")
        import tempfile

        tempfile.tempdir = scratch  # the template may have cached another one
        apply_limits(self.limits)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        from kgb_core.evaluation import runner
        from kgb_core.evaluation.arena import Arenas

        sock = socket.socket(fileno=CHANNEL_FD)
        code = runner.serve(sock, runner.RunnerConfig.from_dict(self.config), self.counter,
                            message["io"], Arenas.attach(ARENA_FDS, MAX_FILE_BYTES))
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        return code

    def _watch_child(self) -> None:
        assert self.child is not None
        while True:  # in the sandbox the template is init: orphans come here to be reaped
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
            if pid == self.child:
                self._report_exit(status)
                return
        if self.host_memory_limit:
            resident = resident_bytes(self.child)
            if resident > self.host_memory_limit:
                self.killed_for_memory = resident
                self._kill_all()

    def _report_exit(self, status: int) -> None:
        strays = self._kill_all()
        while True:  # reap what was just killed
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        self.send({"type": "exited", "pid": self.child, "status": status,
                   "returncode": os.waitstatus_to_exitcode(status),
                   "killed_for_memory": self.killed_for_memory, "strays": strays})
        self.child = None
        if self.child_fd is not None:
            os.close(self.child_fd)
            self.child_fd = None
        self._clean_scratch()

    def _strays(self) -> set[int]:
        """Processes the runner may have left: in the sandbox's own PID namespace every one but
        the init and the template; outside it, those still in the runner's session."""
        return set(self._stray_states())

    def _stray_states(self) -> dict[int, str]:
        me = os.getpid()
        processes = _live_processes()
        if self.sandboxed:  # the template is init (pid 1) of the sandbox's PID namespace
            return {pid: state for pid, (state, _) in processes.items()
                    if pid not in (me, self.child)}
        return {pid: state for pid, (state, session) in processes.items()
                if pid not in (me, self.child) and self.child is not None
                and session == self.child}

    def _kill_all(self) -> int:
        """Kill the runner and everything it left; returns how many others there were. The
        runner itself is reaped by ``_watch_child``, never here.

        Everything seen is stopped first and killed only once a scan finds no process that is
        not stopped: a chain of processes that each fork a successor and exit would otherwise
        outrun a scan-then-kill loop (a stopped process forks nothing)."""
        if self.child is not None:
            try:
                os.killpg(self.child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        strays: set[int] = set()
        seen: set[int] | None = None
        for _ in range(5000):
            # Until two scans in a row show the same processes, all stopped: a scan is no
            # snapshot (a child forked after the listing is missed while its parent already
            # reads as a zombie), and a stop lands at a process's next return from the kernel.
            states = self._stray_states()
            listing = _all_pids()
            strays |= set(states)
            moving = [pid for pid, state in states.items() if state not in ("T", "t")]
            for pid in moving:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except (ProcessLookupError, PermissionError):
                    pass
            if not moving and listing == seen:
                break
            seen = listing
        for _ in range(200):
            for pid in strays | self._strays():
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if not self._strays():
                break
            time.sleep(0.01)
        return len(strays)

    def _end_child(self) -> None:
        if self.child is not None:
            self._kill_all()

    def _clean_scratch(self) -> None:
        """Inside the sandbox /dev/shm is the sandbox's own: nothing a runner put there stays.
        The runners' work folder, bound in from the host's /dev/shm when KGB_RUNNER_DIR puts
        it there (``runners.runners_root``), is the judge's to clean."""
        if not self.sandboxed or not os.path.isdir("/dev/shm"):
            return
        work = os.path.normpath(str(self.config.get("work") or ""))
        for entry in os.listdir("/dev/shm"):
            path = os.path.join("/dev/shm", entry)
            if path == work:
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def main() -> int:
    control = socket.socket(fileno=int(os.environ.pop("KGB_TEMPLATE_FD")))
    config = json.loads(os.environ.pop("KGB_TEMPLATE_CONFIG"))
    _prctl(_PR_SET_DUMPABLE, 0)
    try:
        counter = _preload(config)
    except Exception as error:  # the judge turns this into a clear error for the user
        import traceback

        control.sendall((json.dumps({"type": "startup_failed",
                                     "error": f"{type(error).__name__}: {error}",
                                     "traceback": traceback.format_exc()}) + "\n").encode())
        return 1
    return Template(control, config, counter).serve()


if __name__ == "__main__":
    sys.exit(main())
