"""The problem host: ``python -m kgb_source_kernelbench.host FOLDER DEVICE``, in the sandbox.

Problem files are code, so the harness and the judge never import them: each starts this
process, in the same OS sandbox as candidates' runners (``kgb_core.evaluation.sandbox``), and
asks it, one JSON line per request on stdin, one JSON line per reply on stdout:

- ``describe``: what the source needs to list the problem (``problems.describe``);
- ``inputs``: one case's values drawn from a seed (inputs, the model's parameters and buffers,
  its constructor arguments), on the host, written to a file in FOLDER;
- ``reference``: the problem's ``Model`` on given values, its output (and the values it writes
  in place) written back;
- ``time``: the reference timed with the backend's own timer, on given input sets.

Values cross as data only (``kgb_core.evaluation.exchange``: raw bytes and a JSON tree, never a
pickle), so what this process sends the judge is tensors, whatever the problem file did.
Anything the problem file prints goes to stderr: stdout is the protocol's.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

# Limit on one request's file: the largest case KernelBench has is a few GB.
READ_LIMIT_BYTES = 64 << 30


class Host:
    def __init__(self, folder: str, device: str, backend_module: str, backend_name: str) -> None:
        self.folder = folder
        self.device = device
        self.backend_module, self.backend_name = backend_module, backend_name
        self.modules: dict[str, Any] = {}
        self.models: dict[Any, Any] = {}
        self.files = 0
        self.backend: Any = None
        # The case each drawn set of values belongs to (by its shapes and constructor
        # arguments): a forward may read the module-level sizes, which are then the case's.
        self.cases: dict[tuple, dict[str, int]] = {}

    def module(self, path: str) -> Any:
        from kgb_source_kernelbench import problems

        if path not in self.modules:
            self.modules[path] = problems.load(path)
        return self.modules[path]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "describe":
            from kgb_source_kernelbench import problems

            return {"description": problems.describe(request["path"])}
        if op == "inputs":
            return self.inputs(request)
        if op == "reference":
            return self.reference(request)
        if op == "time":
            return self.time(request)
        raise ValueError(f"unknown request {op!r}")

    # -- values across --------------------------------------------------------------------
    def _send(self, value: Any) -> dict[str, Any]:
        from kgb_core.evaluation import exchange

        packed = exchange.pack(value)
        self.files += 1
        name = f"reply-{self.files}.bin"
        packed.write(os.path.join(self.folder, name))
        return {"tree": packed.tree, "file": name}

    def _received(self, request: dict[str, Any]) -> Any:
        from kgb_core.evaluation import exchange

        path = os.path.join(self.folder, os.path.basename(request["file"]))
        try:
            blob = exchange.read_file(path, READ_LIMIT_BYTES)
        finally:
            os.unlink(path)
        return exchange.unpack(request["tree"], blob, self.device)

    # -- requests -------------------------------------------------------------------------
    def inputs(self, request: dict[str, Any]) -> dict[str, Any]:
        from kgb_source_kernelbench import problems

        module = self.module(request["path"])
        inputs, model, init = problems.build(module, dict(request["params"]),
                                             int(request["seed"]))
        state = [value.detach() for value in problems.state(model).values()]
        values = [*inputs, *state, *init]
        self.cases[_shapes(request["path"], values)] = dict(request["params"])
        return self._send(values)

    def _model(self, path: str, init: tuple) -> Any:
        import torch

        key = (path, repr(init))
        if key not in self.models:
            with torch.device("meta"):  # its values are the judge's, handed in every call
                self.models[key] = self.module(path).Model(*init)
        return self.models[key]

    def _call(self, request: dict[str, Any], arguments: list) -> Any:
        import torch

        from kgb_core.module_contract import ModuleContract
        from kgb_source_kernelbench import problems

        contract = ModuleContract.from_dict(request["contract"])
        inputs, state, init = contract.split(arguments)
        problems._set(self.module(request["path"]),
                      self.cases.get(_shapes(request["path"], arguments), {}))
        model = self._model(request["path"], init)
        with torch.no_grad():
            return problems.call(model, list(inputs), list(state), list(contract.state))

    def reference(self, request: dict[str, Any]) -> dict[str, Any]:
        arguments = list(self._received(request))
        output = self._call(request, arguments)
        written = [arguments[int(i)] for i in request.get("written") or ()]
        return self._send([output, written])

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reference timed as KernelBench times it: ``model(*inputs)`` on a model that holds
        each set's parameters and buffers itself (``load_state_dict(assign=True)``), so the
        baseline carries none of ``functional_call``'s swapping of them."""
        import itertools

        import torch

        from kgb_core.module_contract import ModuleContract
        from kgb_core.timing import TimingSettings
        from kgb_source_kernelbench import problems

        contract = ModuleContract.from_dict(request["contract"])
        calls = []
        for values in self._received(request):
            values = list(values)
            inputs, state, init = contract.split(values)
            problems._set(self.module(request["path"]),
                          self.cases.get(_shapes(request["path"], values), {}))
            with torch.device("meta"):
                model = self.module(request["path"]).Model(*init)
            model.load_state_dict(dict(zip(contract.state, state)), assign=True)
            calls.append((model, inputs))
        backend = self._backend()
        timer = backend.make_timer(TimingSettings.from_mapping(request.get("settings") or {},
                                                               backend.default_timing))
        turns = itertools.cycle(calls)

        def once() -> None:
            model, inputs = next(turns)
            model(*inputs)

        with torch.no_grad():
            once()  # warm before the clock starts
            timing = timer.measure(once)
        return {"timing": timing.to_dict()}

    def _backend(self) -> Any:
        """The judge's backend, for its timer: from the one module that registers it, as a
        runner loads it (the plugin registry would import every source)."""
        if self.backend is None:
            from kgb_core.evaluation.runner import load_backend

            self.backend = load_backend(self.backend_module, self.backend_name)
            self.backend.setup()
        return self.backend


def _shapes(path: str, values: list) -> tuple:
    import torch

    return (path,) + tuple(tuple(v.shape) if isinstance(v, torch.Tensor) else repr(v)
                           for v in values)


def main() -> int:
    folder, device, backend_module, backend_name = sys.argv[1:5]
    # The protocol gets its own copy of stdout; what the problem prints goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    host = Host(folder, device, backend_module, backend_name)
    if device != "cpu":
        # The backend's own device setup, as the judge's references get it: on NVIDIA, TF32
        # off in cuBLAS and cuDNN, so an fp32 convolution's reference is fp32.
        host._backend()
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = host.handle(json.loads(line))
        except Exception as error:  # noqa: BLE001 - every failure is the reply's
            reply = {"error": f"{type(error).__name__}: {error}",
                     "traceback": traceback.format_exc(limit=8)}
        protocol.write(json.dumps(reply, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
