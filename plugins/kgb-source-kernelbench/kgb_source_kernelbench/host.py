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

from kgb_core.api import ProblemServer, serve


class Host(ProblemServer):
    def __init__(self, *args: str) -> None:
        super().__init__(*args)
        self.modules: dict[str, Any] = {}
        # The reference Model called as a candidate's ModelNew is (kgb_core.module_contract):
        # built on the meta device once per constructor arguments, the judge's state swapped in.
        self.kernels: dict[str, Any] = {}
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

    def _kernel(self, request: dict[str, Any], values: list) -> Any:
        """The Model as ``kernel(*values)``, with the module-level sizes of their case set."""
        from kgb_core.api import ModuleContract, ModuleKernel
        from kgb_source_kernelbench import problems

        path = request["path"]
        problems.set_sizes(self.module(path), self.cases.get(_shapes(path, values), {}))
        if path not in self.kernels:
            contract = ModuleContract.from_dict(request["contract"])
            self.kernels[path] = ModuleKernel(self.module(path).Model, contract)
        return self.kernels[path]

    def op_reference(self, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        arguments = list(self.values_in(request))
        kernel = self._kernel(request, arguments)
        kernel.prepare(arguments)
        with torch.no_grad():
            output = kernel(*arguments)
        written = [arguments[int(i)] for i in request.get("written") or ()]
        return self.values_out([output, written])

    def op_time(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reference timed as KernelBench times it: ``model(*inputs)`` on a model that holds
        each set's parameters and buffers itself (``prepare(bind=True)``), so the baseline
        carries none of ``functional_call``'s swapping of them."""
        import itertools

        import torch

        calls = []
        for values in self.values_in(request):
            values = list(values)
            kernel = self._kernel(request, values)
            calls.append((kernel.prepare(values, bind=True), kernel.contract.split(values)[0]))
        kernel.release()  # the instances stay alive in ``calls`` until the timing is done
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
