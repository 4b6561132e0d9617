"""The KernelBench problem host, run in the sandbox by ``kgb_core.problem_host``.

Problem files are code, so the harness and the judge never import them: each starts this
process, in the same OS sandbox as candidates' runners, and asks it
(``kgb_core.problem_server``'s loop):

- ``describe``: what the source needs to list the problem (``problems.describe``);
- ``inputs``: one case's values drawn from a seed (inputs, the model's parameters and buffers,
  its constructor arguments), on the host, written to a file in FOLDER;
- ``reference``: the problem's ``Model`` on given values, its output (and the values it writes
  in place) written back;
- ``time``: the reference timed with the backend's own timer, on given input sets.

Values cross as data only, so what this process sends the judge is tensors, whatever the
problem file did.
"""

from __future__ import annotations

import sys
from typing import Any

from kgb_core.problem_server import ProblemServer, serve


class Host(ProblemServer):
    def __init__(self, *args: str) -> None:
        super().__init__(*args)
        self.modules: dict[str, Any] = {}
        self.models: dict[Any, Any] = {}
        # The case each drawn set of values belongs to (by its shapes and constructor
        # arguments): a forward may read the module-level sizes, which are then the case's.
        self.cases: dict[tuple, dict[str, int]] = {}

    def module(self, path: str) -> Any:
        from kgb_source_kernelbench import problems

        if path not in self.modules:
            self.modules[path] = problems.load(path)
        return self.modules[path]

    # -- requests -------------------------------------------------------------------------
    def op_describe(self, request: dict[str, Any]) -> dict[str, Any]:
        from kgb_source_kernelbench import problems

        return {"description": problems.describe(request["path"])}

    def op_inputs(self, request: dict[str, Any]) -> dict[str, Any]:
        from kgb_source_kernelbench import problems

        module = self.module(request["path"])
        inputs, model, init = problems.build(module, dict(request["params"]),
                                             int(request["seed"]))
        state = [value.detach() for value in problems.state(model).values()]
        values = [*inputs, *state, *init]
        self.cases[_shapes(request["path"], values)] = dict(request["params"])
        return self.values_out(values)

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
        problems.set_sizes(self.module(request["path"]),
                      self.cases.get(_shapes(request["path"], arguments), {}))
        model = self._model(request["path"], init)
        with torch.no_grad():
            return problems.call(model, list(inputs), list(state), list(contract.state))

    def op_reference(self, request: dict[str, Any]) -> dict[str, Any]:
        arguments = list(self.values_in(request))
        output = self._call(request, arguments)
        written = [arguments[int(i)] for i in request.get("written") or ()]
        return self.values_out([output, written])

    def op_time(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reference timed as KernelBench times it: ``model(*inputs)`` on a model that holds
        each set's parameters and buffers itself (``load_state_dict(assign=True)``), so the
        baseline carries none of ``functional_call``'s swapping of them."""
        import itertools

        import torch

        from kgb_core.module_contract import ModuleContract
        from kgb_source_kernelbench import problems

        contract = ModuleContract.from_dict(request["contract"])
        calls = []
        for values in self.values_in(request):
            values = list(values)
            inputs, state, init = contract.split(values)
            problems.set_sizes(self.module(request["path"]),
                          self.cases.get(_shapes(request["path"], values), {}))
            with torch.device("meta"):
                model = self.module(request["path"]).Model(*init)
            model.load_state_dict(dict(zip(contract.state, state)), assign=True)
            calls.append((model, inputs))
        timer = self.timer(request.get("settings"))
        turns = itertools.cycle(calls)

        def once() -> None:
            model, inputs = next(turns)
            model(*inputs)

        with torch.no_grad():
            once()  # warm before the clock starts
            timing = timer.measure(once)
        return {"timing": timing.to_dict()}


def _shapes(path: str, values: list) -> tuple:
    import torch

    return (path,) + tuple(tuple(v.shape) if isinstance(v, torch.Tensor) else repr(v)
                           for v in values)


if __name__ == "__main__":
    sys.exit(serve(Host))
