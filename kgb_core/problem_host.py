"""A problem host: the sandboxed process that runs another benchmark's problem files.

Problem files in other benchmarks' formats (KernelBench's, GPU MODE's) are code: loading one
runs it. So neither the harness nor the judge imports them. A source plugin for such a format
names a server module (``python -m <module> FOLDER DEVICE BACKEND_MODULE BACKEND``, built on
``kgb_core.problem_server``), and this side starts it in the same OS sandbox as candidates'
runners, with the problem folder readable and a work folder of its own writable, and asks it
one JSON line per request; tensors cross as files of raw bytes with a JSON description
(``kgb_core.evaluation.exchange``), never a pickle.

One host per (server module, problem folder, device) per process, started on first use, ended
with the process (its stdin closes; bubblewrap's ``--die-with-parent`` ends it if this
process is killed). It sees nothing of kgb's sources or store: the same masks as a runner's.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from kgb_core.evaluation.judge import JUDGE_ONLY
from kgb_core.problem_server import read_values, write_values

# How long one request may take: a large case's draw on the host, or its timing.
REQUEST_TIMEOUT_S = 600.0
STARTUP_TIMEOUT_S = 120.0


class ProblemHostError(RuntimeError):
    """The host failed a request (the problem raised, or the host died); the message says."""


class ProblemHost:
    def __init__(self, server: str, device: str, folder: str) -> None:
        from kgb_core.evaluation import sandbox

        self.device = device
        self.folder = tempfile.mkdtemp(prefix="kgb-problems-")
        self.files = 0
        self.lock = threading.Lock()
        tool = sandbox.find_sandbox()
        self.backend_name, backend_module, device_files = _backend()
        program = [sys.executable, "-P", "-m", server, self.folder, device, backend_module,
                   self.backend_name]
        masked = sandbox.source_locations(_source_modules(server))
        masked += [path for path in os.environ.get("KGB_HIDDEN_PATHS", "").split(os.pathsep)
                   if path]
        command = sandbox.command(tool, program, writable=[self.folder],
                                  devices=sandbox.device_paths(device_files), masked=masked,
                                  readable=[folder])
        # What a runner never sees, the problem host does not either.
        env = {k: v for k, v in os.environ.items() if not k.startswith(JUDGE_ONLY)}
        # Its home, temporary files and caches in its own folder: the rest is read-only.
        for variable, name in (("HOME", "home"), ("TMPDIR", "tmp"), ("TRITON_CACHE_DIR", "triton"),
                               ("TORCHINDUCTOR_CACHE_DIR", "inductor")):
            env[variable] = os.path.join(self.folder, name)
            os.makedirs(env[variable], exist_ok=True)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env,
                                        start_new_session=True)
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._reply(STARTUP_TIMEOUT_S)

    def _drain(self) -> None:
        for line in self.process.stderr:
            self.stderr = (self.stderr + [line])[-40:]

    def _reply(self, timeout_s: float) -> dict[str, Any]:
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(timeout_s)
        if not result or not result[0]:
            self.close()
            raise ProblemHostError("the problem host " + ("timed out" if not result else "died")
                                   + ": " + "".join(self.stderr[-10:]).strip()[-1500:])
        reply = json.loads(result[0])
        if "error" in reply:
            raise ProblemHostError(reply["error"])
        return reply

    def request(self, payload: dict[str, Any], values: Any = None) -> dict[str, Any]:
        """Send ``payload`` (with ``values`` written to a file of the folder); the reply."""
        with self.lock:
            if self.process.poll() is not None:
                raise ProblemHostError("the problem host has exited: "
                                       + "".join(self.stderr[-10:]).strip()[-1500:])
            if values is not None:
                self.files += 1
                payload = {**payload, **write_values(self.folder, f"request-{self.files}.bin",
                                                     values)}
            self.process.stdin.write(json.dumps(payload) + "\n")
            self.process.stdin.flush()
            return self._reply(REQUEST_TIMEOUT_S)

    def values(self, reply: dict[str, Any], device: str) -> Any:
        """The values a reply's file holds, rebuilt on ``device``; the file is removed."""
        return read_values(self.folder, reply, device)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def _source_modules(server: str) -> list[str]:
    """Every operator source's module but the server's own (what a runner's sandbox masks)."""
    from kgb_core.plugins import load_registry

    own = server.partition(".")[0]
    return [module for module in load_registry().modules_providing("source")
            if module.partition(".")[0].partition(":")[0] != own]


def _backend() -> tuple[str, str, list[str]]:
    """The judge's backend (name, the module that registers it, its device files), or the
    fallback's (the CPU interpreter) where this process is no judge (``kgb ops`` describing
    problems)."""
    from kgb_core.plugins import load_registry

    registry = load_registry()
    name = os.environ.get("KGB_WORKER_BACKEND")
    backend = registry.backend(name) if name else registry.fallback_backend()
    return backend.name, registry.backend_module(backend), list(backend.sandbox_device_files())


_hosts: dict[tuple[str, str, str], ProblemHost] = {}
_hosts_lock = threading.Lock()


def host(server: str, folder: str, device: str = "cpu") -> ProblemHost:
    """This process's host running ``server`` on ``device``, reading the problems of
    ``folder``: one per server, folder and device, started again if it died."""
    key = (server, os.path.realpath(folder), str(device))
    with _hosts_lock:
        found = _hosts.get(key)
        if found is None or found.process.poll() is not None:
            found = _hosts[key] = ProblemHost(server, key[2], key[1])
        return found


@atexit.register
def _close_all() -> None:
    for found in list(_hosts.values()):
        found.close()
    _hosts.clear()


def device_of(arguments: Sequence[Any]) -> str:
    """The device of the first tensor among ``arguments`` (the CPU where none is)."""
    import torch

    for value in arguments:
        if isinstance(value, torch.Tensor):
            return str(value.device)
    return "cpu"


def operator_name(stem: str) -> str:
    """An operator's name from a problem's file or folder name: anything but letters, digits
    and _ as _ (``19_ReLU.py`` is ``19_ReLU``, ``vectoradd_py/`` is ``vectoradd_py``)."""
    return re.sub(r"[^0-9A-Za-z_]", "_", stem).strip("_") or "problem"


def problem_root(source: str, path: str) -> Path:
    """The folder a source's ``path`` option names, or a clear error where it is none."""
    root = Path(path).expanduser()
    if not root.is_dir():
        from kgb_core.errors import UserError

        raise UserError(f"{source}.path={path!r} is no folder")
    return root


def described(source: str, problems: Sequence[Any], describe: Callable[[Any], Any],
              make: Callable[[Any, Any], Any]) -> list[Any]:
    """``make(problem, describe(problem))`` for each problem the host can describe; one that it
    cannot is no operator, with a warning saying why (``kgb ops`` prints it)."""
    import warnings

    made = []
    for problem in problems:
        try:
            description = describe(problem)
        except ProblemHostError as error:
            warnings.warn(f"{source}: {Path(str(problem)).name} is no operator: {error}",
                          stacklevel=3)
            continue
        made.append(make(problem, description))
    return made


def problem_folder_source(name: str, description: str,
                          build: Callable[..., Sequence[Any]]) -> Any:
    """A source whose one option, ``path``, is the folder of another benchmark's problems:
    resolved where kgb was started, masked from candidates' runners."""
    from kgb_core.operators import OperatorSource

    def hidden(path: str = "") -> list[str]:
        return [os.path.abspath(os.path.expanduser(path))] if path else []

    return OperatorSource(name=name, description=description, build=build,
                          options={"path": ""}, hidden=hidden, path_options=frozenset({"path"}))
