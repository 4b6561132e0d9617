"""kgb-source-gpumode: GPU MODE reference-kernels problem folders as kgb operators.

``--source gpumode --source-opt gpumode.path=DIR``: every folder of DIR holding ``task.yml``
and ``reference.py`` (a checkout's ``problems/pmpp``, say) is the operator
``gpumode.<folder>``.

- Inputs: the problem's ``generate_input(**args)``, with ``task.yml``'s ``tests`` as the
  ``small`` cases and its ``benchmarks`` as the ``large`` (timed) ones. kgb's seed is mixed
  into each case's own seed: the task's seeds are public, so the values kgb checks are not.
  The problem's ``data`` is kgb's arguments: ``kernel(*data)`` for a tuple, ``kernel(data)``
  for one value.
- Answers: ``kernel(...)`` as listed, or GPU MODE's own ``custom_kernel(data)``
  (kgb_core/module_contract.py, ``PackedContract``).
- Correctness: the problem's own ``check_implementation(data, output)``, as the problem
  defines it, run by the judge's problem host on a pristine copy of the inputs, wherever the
  judge compares an output (trials, rewritten inputs, ghost replay, timed samples); the baseline
  is ``ref_kernel`` timed there with the backend's timer.
- No held-out cases: a task's cases are public and its arguments are the problem's own
  (which integers are sizes only the problem knows), so kgb does not invent others.
- Problem files are code: only the problem host runs them, sandboxed like a candidate's
  runner (``host.py``); the folder is masked from runners.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.api import KNOWN_DTYPES, LARGE, SMALL, OperatorSpec, ShapeCase

__version__ = "0.1.0"

SOURCE = "gpumode"
SERVER = "kgb_source_gpumode.host"


def problem_folders(path: str) -> list[Path]:
    from kgb_core.api import problem_root

    return sorted(p for p in problem_root(SOURCE, path).iterdir()
                  if (p / "task.yml").is_file() and (p / "reference.py").is_file())


def _digest(folder: Path) -> str:
    hasher = hashlib.sha256()
    for name in ("task.yml", "reference.py", "task.py"):
        if (folder / name).is_file():
            hasher.update(name.encode() + b"\0" + (folder / name).read_bytes())
    return hasher.hexdigest()


def _dtype(description: dict[str, Any]) -> str:
    for value in description["inputs"]:
        if isinstance(value, dict) and value.get("dtype") in KNOWN_DTYPES:
            return value["dtype"]
    return "float32"


def spec_of(folder: Path, description: dict[str, Any]) -> OperatorSpec:
    from kgb_core.api import PackedContract, device_of, host, operator_name

    where, root = str(folder.resolve()), str(folder.resolve().parent)
    single = bool(description["single"])
    cases = tuple([ShapeCase(f"test-{i}", dict(args), SMALL)
                   for i, args in enumerate(description["tests"])]
                  + [ShapeCase(f"bench-{i}", dict(args), LARGE)
                     for i, args in enumerate(description["benchmarks"])])
    count = len(description["inputs"])
    names = ["data"] if single else [f"data{i}" for i in range(count)]
    digest = _digest(folder)

    def request(op: str, device: str, values: Any = None, **extra: Any) -> dict[str, Any]:
        return host(SERVER, root, device).request(
            {"op": op, "path": where, "single": single, **extra}, values)

    def make_inputs(ctx: Any) -> list[Any]:
        if getattr(ctx, "ahead", False):
            # A draw ahead (kgb's InputContext.ahead) fills the context's draw cache; the
            # problem's own code draws these values in its host: nothing to draw ahead.
            return []
        chosen = host(SERVER, root, ctx.device)
        reply = chosen.request({"op": "inputs", "path": where, "params": dict(ctx.params),
                                "seed": ctx.seed})
        return list(chosen.values(reply, ctx.device))

    def reference(*arguments: Any) -> Any:
        device = device_of(arguments)
        reply = request("reference", device, list(arguments))
        return host(SERVER, root, device).values(reply, device)

    def check_output(arguments: Any, output: Any) -> str:
        from kgb_core.api import ExchangeError

        try:
            return request("check", device_of(arguments), [list(arguments), output])["message"]
        except ExchangeError as error:
            return f"the output cannot be checked: {error}"

    def time_baseline(settings: Mapping[str, Any], sets: Any) -> Any:
        from kgb_core.api import Timing

        reply = request("time", device_of(sets[0]), [list(one) for one in sets],
                        settings=dict(settings))
        return Timing(**reply["timing"])

    text = "\n".join([
        description["text"].strip() or f"GPU MODE problem {folder.name}",
        "",
        f"A GPU MODE problem ({folder}, sha256 {digest[:16]}): reference.py's ref_kernel(data) "
        f"on generate_input(**args); task.yml's tests are the small cases, its benchmarks the "
        f"large ones. The problem's check_implementation(data, output) judges every output.",
        "",
        "```python",
        (folder / "reference.py").read_text(errors="replace").rstrip(),
        "```",
        "",
        f"Answer with `kernel({', '.join(names)})` or GPU MODE's `custom_kernel(data)`, where "
        f"data is {'the one value' if single else 'the tuple of the arguments'} generate_input "
        f"returns. Every computation runs in @triton.jit kernels; torch only allocates, views "
        f"and copies. No held-out cases: the task's own are public.",
    ])
    return OperatorSpec(
        source=SOURCE, name=operator_name(folder.name),
        signature=f"kernel({', '.join(names)}) -> Tensor", description=text,
        reference=reference, make_inputs=make_inputs, cases=cases,
        dtypes=(_dtype(description),), flops=lambda params: 0.0,
        bytes_moved=lambda params, itemsize: 0.0,
        tags=frozenset({"gpumode", f"sha256:{digest[:16]}"}),
        mutated_args=tuple(description["written"]),
        module_contract=PackedContract(single=single), check_output=check_output,
        time_baseline=time_baseline)


def build(path: str = "") -> list[OperatorSpec]:
    """The operators of every problem folder in ``path`` (none while it is unset)."""
    from kgb_core.api import described, host

    def describe(folder: Path) -> dict[str, Any]:
        where = folder.resolve()
        return host(SERVER, str(where.parent)).request(
            {"op": "describe", "path": str(where)})["description"]

    return described(SOURCE, problem_folders(path) if path else [], describe, spec_of)


@hookimpl
def kgb_register_sources(register):
    from kgb_core.api import problem_folder_source

    register(problem_folder_source(
        SOURCE, "GPU MODE reference-kernels problem folders (task.yml, reference.py) from a "
                "folder: --source-opt gpumode.path=DIR", build))
