"""The inside of a problem host (``kgb_core.problem_host``): a request loop and the values.

A source plugin for another benchmark's format subclasses ``ProblemServer`` with one method
per request it answers (``op_<name>(request) -> reply``) and ends its module with
``serve(TheServer)``. The loop reads one JSON request per line on stdin and writes one JSON
reply per line on a copy of stdout, while the problem's own prints go to stderr. Tensors come
in and go out as files of the host's work folder (``values_in``, ``values_out``; the other
side uses ``write_values`` and ``read_values`` too): raw bytes and a JSON description
(``kgb_core.evaluation.exchange``), never a pickle.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

# The largest file of values read, either way (the largest case KernelBench has is a few GB).
READ_LIMIT_BYTES = 64 << 30


def write_values(folder: str, name: str, value: Any) -> dict[str, Any]:
    """``value`` written to ``folder/name``; the message's part that names it (both sides)."""
    from kgb_core.evaluation import exchange

    packed = exchange.pack(value)
    packed.write(os.path.join(folder, name))
    return {"tree": packed.tree, "file": name}


def read_values(folder: str, message: dict[str, Any], device: str) -> Any:
    """The values the file a message names holds, rebuilt on ``device``, every tensor (a
    problem host draws its inputs on the CPU for the judge's device); the file is removed."""
    from kgb_core.evaluation import exchange

    path = os.path.join(folder, os.path.basename(message["file"]))
    try:
        blob = exchange.read_file(path, READ_LIMIT_BYTES)
    finally:
        os.unlink(path)
    return exchange.unpack(message["tree"], blob, device, keep_host=False)


def describe_value(value: Any) -> Any:
    """A value as a listing shows it: a tensor's shape and dtype, a plain value itself."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, (list, tuple)):
        return [describe_value(v) for v in value]
    return value if value is None or isinstance(value, (bool, int, float, str)) \
        else type(value).__name__


class ProblemServer:
    def __init__(self, folder: str, device: str, backend_module: str, backend_name: str) -> None:
        self.folder = folder
        self.device = device
        self.backend_module, self.backend_name = backend_module, backend_name
        self.backend: Any = None
        self._files = 0

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, f"op_{request.get('op')}", None)
        if handler is None:
            raise ValueError(f"unknown request {request.get('op')!r}")
        return handler(request)

    def values_out(self, value: Any) -> dict[str, Any]:
        """``value`` written to a file of the work folder; the reply's part that names it."""
        self._files += 1
        return write_values(self.folder, f"reply-{self._files}.bin", value)

    def values_in(self, request: dict[str, Any]) -> Any:
        """The values a request's file holds, on this host's device; the file is removed."""
        return read_values(self.folder, request, self.device)

    def backend_object(self) -> Any:
        """The judge's backend, set up (its timer; on NVIDIA, TF32 off): from the one module
        that registers it, as a runner loads it (the registry would import every source)."""
        if self.backend is None:
            from kgb_core.evaluation.runner import load_backend

            self.backend = load_backend(self.backend_module, self.backend_name)
            self.backend.setup()
        return self.backend

    def timer(self, settings: dict[str, Any] | None) -> Any:
        from kgb_core.timing import TimingSettings

        backend = self.backend_object()
        return backend.make_timer(TimingSettings.from_mapping(settings or {},
                                                              backend.default_timing))


def serve(server_class: type[ProblemServer]) -> int:
    """The loop of ``python -m <server module> FOLDER DEVICE BACKEND_MODULE BACKEND``."""
    folder, device, backend_module, backend_name = sys.argv[1:5]
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = server_class(folder, device, backend_module, backend_name)
    if device != "cpu":
        # The backend's own device setup, as the judge's references get it: on NVIDIA, TF32
        # off in cuBLAS and cuDNN, so an fp32 convolution's reference is fp32.
        server.backend_object()
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = server.handle(json.loads(line))
        except Exception as error:  # noqa: BLE001 - every failure is the reply's
            reply = {"error": f"{type(error).__name__}: {error}",
                     "traceback": traceback.format_exc(limit=8)}
        protocol.write(json.dumps(reply, default=str) + "\n")
    return 0
