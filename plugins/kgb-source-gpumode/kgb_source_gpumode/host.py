"""The GPU MODE problem host, run in the sandbox by ``kgb_core.problem_host``.

A problem folder holds ``task.yml`` and ``reference.py`` (``generate_input(**args)``,
``ref_kernel(data)``, ``check_implementation(data, output)``), which import the folder's
``task.py`` and the ``utils.py`` that ``task.yml``'s ``files`` names (``../utils.py``). This
process loads them, draws inputs, runs the reference, runs the problem's own check of an
output, and times the reference; the judge never imports any of it.

GPU MODE's problems are written for CUDA (``device="cuda"``, ``torch.Generator(device="cuda")``).
On a host without CUDA (the CPU backend) every CUDA device they name is read as the CPU, so
the same problems run in Triton's interpreter; what they draw is then the CPU generator's.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from typing import Any

from kgb_core.api import ProblemServer, describe_value, serve

_numbers = itertools.count(1)
# The submission and the harness of GPU MODE's own runner: never loaded here.
_NOT_LOADED = {"submission.py", "eval.py"}


def _redirect_cuda_to_cpu() -> None:
    """Read every CUDA device a problem names as the CPU (this host has no CUDA)."""
    import torch
    from torch.overrides import TorchFunctionMode

    def host_device(value: Any) -> Any:
        text = str(value) if isinstance(value, (str, torch.device)) else ""
        return "cpu" if text.startswith("cuda") else value

    class CudaAsCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = host_device(kwargs["device"])
            if func is torch.Tensor.cuda:
                return args[0]
            if func is torch.Tensor.to:
                args = tuple(host_device(a) for a in args)
            return func(*args, **kwargs)

    generator = torch.Generator

    def cpu_generator(device: Any = "cpu") -> Any:
        return generator(device=host_device(device))

    torch.Generator = cpu_generator  # this process's own torch: no kgb code reads it here
    CudaAsCpu().__enter__()  # for the life of this process


class Problem:
    """One problem folder's reference module, loaded with its own task.py and utils.py."""

    def __init__(self, folder: Path) -> None:
        from kgb_source_gpumode.task_file import read

        self.folder = folder
        self.task = read(folder / "task.yml")
        sources = {entry["name"]: (folder / entry["source"]).resolve()
                   for entry in self.task["files"]
                   if entry.get("name") not in _NOT_LOADED and entry.get("source", "@")[0] != "@"}
        sources.setdefault("reference.py", folder / "reference.py")
        sources.setdefault("task.py", folder / "task.py")
        saved = {name: sys.modules.get(name) for name in ("task", "utils", "reference")}
        try:
            for name in ("task.py", "utils.py", "reference.py"):
                if name in sources and sources[name].exists():
                    sys.modules[name[:-3]] = self._load(sources[name])
            self.reference = sys.modules["reference"]
        finally:
            for name, module in saved.items():  # the next problem imports its own
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
        for name in ("generate_input", "ref_kernel", "check_implementation"):
            if not callable(getattr(self.reference, name, None)):
                raise ValueError(f"{folder.name}/reference.py defines no {name}")

    @staticmethod
    def _load(path: Path) -> Any:
        spec = importlib.util.spec_from_file_location(f"kgb_gpumode_{next(_numbers)}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def draw(self, params: dict[str, Any], seed: int) -> tuple[list, bool]:
        """generate_input's data as a list of values, and whether it was one value. kgb's seed
        is mixed into the case's own (public) seed, so the values are not the task's."""
        args = dict(params)
        args["seed"] = (int(args.get("seed", 0)) * 1_000_003 + int(seed)) % (1 << 31)
        data = self.reference.generate_input(**args)
        single = not isinstance(data, (tuple, list))
        return ([data] if single else list(data)), single


class Host(ProblemServer):
    def __init__(self, *args: str) -> None:
        super().__init__(*args)
        import torch

        if self.device == "cpu" and not torch.cuda.is_available():
            _redirect_cuda_to_cpu()
        self.problems: dict[str, Problem] = {}

    def problem(self, folder: str) -> Problem:
        if folder not in self.problems:
            self.problems[folder] = Problem(Path(folder))
        return self.problems[folder]

    def op_describe(self, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        from kgb_core.api import pack

        problem = self.problem(request["path"])
        tests = problem.task["tests"]
        if not tests:
            raise ValueError("task.yml lists no tests")
        values, single = problem.draw(tests[0], 0)
        before = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
        output = problem.reference.ref_kernel(_data(values, single))
        pack(values), pack(output)  # data that cannot cross to a runner refuses here
        # The inputs the reference writes (an output buffer the data holds): arguments the
        # operator writes, which a candidate may write too.
        written = [i for i, (v, b) in enumerate(zip(values, before))
                   if isinstance(v, torch.Tensor) and not torch.equal(v, b)]
        return {"description": {
            "text": problem.task["description"], "tests": tests,
            "benchmarks": problem.task["benchmarks"], "single": single, "written": written,
            "inputs": [describe_value(v) for v in values], "output": describe_value(output)}}

    def _values(self, request: dict[str, Any]) -> tuple[Problem, Any]:
        return self.problem(request["path"]), self.values_in(request)

    def op_inputs(self, request: dict[str, Any]) -> dict[str, Any]:
        problem = self.problem(request["path"])
        values, _ = problem.draw(dict(request["params"]), int(request["seed"]))
        return self.values_out(values)

    def op_reference(self, request: dict[str, Any]) -> dict[str, Any]:
        problem, values = self._values(request)
        return self.values_out(problem.reference.ref_kernel(_data(values, request["single"])))

    def op_check(self, request: dict[str, Any]) -> dict[str, Any]:
        """The problem's own check_implementation(data, output): '' when right, else why not
        (it returns an error string, a bool, or a (bool, message) pair)."""
        problem, (values, output) = self._values(request)
        verdict = problem.reference.check_implementation(_data(values, request["single"]),
                                                         output)
        if isinstance(verdict, tuple):
            good, message = bool(verdict[0]), str(verdict[1] if len(verdict) > 1 else "")
        elif isinstance(verdict, bool):
            good, message = verdict, ""
        else:
            good, message = not verdict, str(verdict or "")
        return {"message": "" if good else (message or "check_implementation said no")}

    def op_time(self, request: dict[str, Any]) -> dict[str, Any]:
        problem, sets = self._values(request)
        calls = itertools.cycle([_data(one, request["single"]) for one in sets])
        timer = self.timer(request.get("settings"))
        reference = problem.reference.ref_kernel
        reference(next(calls))  # warm before the clock starts
        return {"timing": timer.measure(lambda: reference(next(calls))).to_dict()}


def _data(values: Any, single: bool) -> Any:
    """The problem's ``data`` from kgb's arguments: the one value, or their tuple."""
    return values[0] if single else tuple(values)


if __name__ == "__main__":
    sys.exit(serve(Host))
