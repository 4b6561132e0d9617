"""The harness's and the judge's side of the problem host: start it in the sandbox, ask it.

One host per device per process, started on first use and ended with the process (its stdin
closes; bubblewrap's ``--die-with-parent`` ends it if this process is killed). The host sees
the problem folder and a work folder of its own, nothing of kgb's sources or store: the same
masks as a candidate's runner, but for the problem folder, which runners never see.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any, Sequence

# How long one request may take: a large case's draw on the host, or its timing.
REQUEST_TIMEOUT_S = 600.0
STARTUP_TIMEOUT_S = 120.0
# Largest reply file read back (the largest case KernelBench has is a few GB).
READ_LIMIT_BYTES = 64 << 30


class ProblemHostError(RuntimeError):
    """The host failed a request (the problem raised, or the host died); the message says."""


class ProblemHost:
    def __init__(self, device: str, folder: str) -> None:
        from kgb_core.evaluation import sandbox

        self.device = device
        self.folder = tempfile.mkdtemp(prefix="kgb-problems-")
        self.files = 0
        self.lock = threading.Lock()
        tool = sandbox.find_sandbox()
        self.backend_name, backend_module, device_files = _backend()
        program = [sys.executable, "-P", "-m", "kgb_source_kernelbench.host", self.folder, device,
                   backend_module, self.backend_name]
        masked = sandbox.source_locations(_source_modules())
        masked += [path for path in os.environ.get("KGB_HIDDEN_PATHS", "").split(os.pathsep)
                   if path]
        command = sandbox.command(tool, program, writable=[self.folder],
                                  devices=sandbox.device_paths(device_files), masked=masked,
                                  readable=[folder])
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("KGB_RESULT_FD", "KGB_LIFELINE_FD", "KGB_HIDDEN_PATHS"))}
        # Its home, temporary files and caches in its own folder: the rest is read-only.
        for variable, name in (("HOME", "home"), ("TMPDIR", "tmp"),
                               ("TRITON_CACHE_DIR", "triton"), ("TORCHINDUCTOR_CACHE_DIR", "inductor")):
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
        from kgb_core.evaluation import exchange

        with self.lock:
            if self.process.poll() is not None:
                raise ProblemHostError("the problem host has exited: "
                                       + "".join(self.stderr[-10:]).strip()[-1500:])
            if values is not None:
                packed = exchange.pack(values)
                self.files += 1
                name = f"request-{self.files}.bin"
                packed.write(os.path.join(self.folder, name))
                payload = {**payload, "tree": packed.tree, "file": name}
            self.process.stdin.write(json.dumps(payload) + "\n")
            self.process.stdin.flush()
            return self._reply(REQUEST_TIMEOUT_S)

    def values(self, reply: dict[str, Any], device: str) -> Any:
        """The values a reply's file holds, rebuilt on ``device``; the file is removed."""
        from kgb_core.evaluation import exchange

        path = os.path.join(self.folder, os.path.basename(reply["file"]))
        try:
            blob = exchange.read_file(path, READ_LIMIT_BYTES)
        finally:
            os.unlink(path)
        return exchange.unpack(reply["tree"], blob, device)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def _source_modules() -> list[str]:
    """Every operator source's module but this one (what a runner's sandbox masks too)."""
    from kgb_core.plugins import load_registry

    return [plugin.module for plugin in load_registry().plugins
            if any(kind == "source" for kind, _ in plugin.provides)
            and not plugin.module.startswith(__package__)]


def _backend() -> tuple[str, str, list[str]]:
    """The judge's backend (name, the module that registers it, its device files), or the CPU
    backend's where this process is no judge (``kgb ops`` describing problems)."""
    from kgb_core.plugins import load_registry

    registry = load_registry()
    name = os.environ.get("KGB_WORKER_BACKEND") or "cpu"
    provider = registry.provider("backend", name)
    backend = registry.backend(name)
    module = provider.module if provider else type(backend).__module__
    return name, module, list(backend.sandbox_device_files())


_hosts: dict[tuple[str, str], ProblemHost] = {}
_hosts_lock = threading.Lock()


def host(path: str, device: str = "cpu") -> ProblemHost:
    """This process's host for the problem file ``path`` on ``device``: one per problem folder
    and device, which it reads; started again if it died."""
    key = (os.path.dirname(os.path.realpath(path)), str(device))
    with _hosts_lock:
        found = _hosts.get(key)
        if found is None or found.process.poll() is not None:
            found = _hosts[key] = ProblemHost(key[1], key[0])
        return found


@atexit.register
def _close_all() -> None:
    for found in list(_hosts.values()):
        found.close()
    _hosts.clear()


def describe(path: str) -> dict[str, Any]:
    return host(path).request({"op": "describe", "path": path})["description"]


def draw(path: str, params: dict[str, Any], seed: int, device: str) -> list[Any]:
    """One case's values, drawn on the CPU (as kgb draws every input) by the device's host,
    which then knows the case of the values it is handed back."""
    chosen = host(path, device)
    return list(chosen.values(chosen.request({"op": "inputs", "path": path, "params": params,
                                              "seed": seed}), device))


def _device_of(arguments: Sequence[Any]) -> str:
    import torch

    for value in arguments:
        if isinstance(value, torch.Tensor):
            return str(value.device)
    return "cpu"


def reference(path: str, contract: Any, written: Sequence[int], arguments: Sequence[Any]) -> Any:
    """The problem's Model on ``arguments``; the arguments it writes are written here too."""
    device = _device_of(arguments)
    chosen = host(path, device)
    reply = chosen.request({"op": "reference", "path": path,
                            "contract": contract.to_dict(), "written": list(written)},
                           list(arguments))
    output, after = chosen.values(reply, device)
    for index, value in zip(written, after):
        arguments[index].copy_(value)
    return output


def time_reference(path: str, contract: Any, settings: dict[str, Any],
                   sets: Sequence[Sequence[Any]]) -> Any:
    from kgb_core.timing import Timing

    reply = host(path, _device_of(sets[0])).request({"op": "time", "path": path,
                                               "contract": contract.to_dict(),
                                               "settings": settings}, [list(one) for one in sets])
    return Timing(**reply["timing"])
