"""kgb-source-kernelbench: KernelBench-format problem files as kgb operators.

``--source kernelbench --source-opt kernelbench.path=DIR`` (or ``[sources.kernelbench] path``
in a run config) makes one operator per ``*.py`` file of DIR in KernelBench's format:
``class Model(nn.Module)``, module-level sizes, ``get_inputs()``, ``get_init_inputs()``.
Its id is ``kernelbench.<file stem>`` (``19_ReLU.py`` is ``kernelbench.19_ReLU``).

- The reference is ``Model(*get_init_inputs())`` on ``get_inputs()``. Its parameters and
  buffers are drawn from the seed with the inputs and handed to reference and candidate alike:
  ``kernel(*inputs, *state, *init_arguments)`` (state in ``state_dict`` order), or
  KernelBench's own ``class ModelNew``, called with the same state (kgb_core/module_contract.py).
- Cases: ``large`` is the file's sizes as written; ``small`` and a held-out case scale the
  module-level integers down (``problems.py``) so the CPU backend runs them in seconds.
- Tolerance: kgb's per-dtype rtol, atol times the largest number of terms any op of the
  forward accumulates (matmul's K, a convolution's window, a reduction's extent), traced on the
  meta device; FLOP and byte counts come from the same trace, and are estimates.
- Problem files are code: only the problem host runs them, in the runners' sandbox
  (``host.py``, ``client.py``); the folder is masked from candidates' runners.
"""

from __future__ import annotations

import hashlib
from functools import partial
from pathlib import Path
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.api import LARGE, SMALL, OperatorSpec, ShapeCase

__version__ = "0.1.0"

SOURCE = "kernelbench"
DTYPES = ("float32",)


def operator_name(path: Path) -> str:
    """The operator's name: the file's stem (kgb_core.problem_host.operator_name)."""
    from kgb_core.api import operator_name as name_of

    return name_of(path.stem)


def problem_files(folder: str) -> list[Path]:
    from kgb_core.api import problem_root

    return sorted(p for p in problem_root(SOURCE, folder).glob("*.py")
                  if not p.name.startswith("_"))


def _key(params: Mapping[str, Any]) -> tuple:
    return tuple(sorted(params.items()))


def _counts(cases: dict[str, dict[str, Any]], field: str, params: Mapping[str, Any],
            *_: Any) -> float:
    for case in cases.values():
        if _key(case["params"]) == _key(params):
            return float(case[field] or 0)
    return 0.0


def _reduce_dim(cases: dict[str, dict[str, Any]], params: Mapping[str, Any]) -> int:
    found = [int(case["reduce_dim"]) for case in cases.values()
             if _key(case["params"]) == _key(params)]
    return max(found or [max(int(c["reduce_dim"]) for c in cases.values())])


def _signature(description: dict[str, Any]) -> str:
    state = [name.replace(".", "_") for name in description["state"]]
    output = description["output"]
    returned = "Tensor" if isinstance(output, dict) else "tuple[Tensor, ...]"
    names = description["inputs"] + state + description["init"]
    return f"kernel({', '.join(names)}) -> {returned}"


def _text(path: Path, description: dict[str, Any], digest: str) -> str:
    state = ", ".join(description["state"]) or "none"
    written = ", ".join(description["written"])
    title = description["doc"].splitlines()[0] if description["doc"] else ""
    lines = [
        title or f"KernelBench problem {path.stem}",
        "",
        f"A KernelBench-format problem ({path}, sha256 {digest[:16]}). Its reference is "
        f"Model(*get_init_inputs()) applied to get_inputs():",
        "",
        "```python",
        path.read_text(errors="replace").rstrip(),
        "```",
        "",
        "Answer with either:",
        f"- `{_signature(description)}`: the inputs of forward, then the model's parameters "
        f"and buffers in state_dict order ({state}), then the constructor's arguments; or",
        "- KernelBench's `class ModelNew(nn.Module)`, built with the same constructor "
        "arguments and holding parameters and buffers under the same names; kgb hands in the "
        "values of those (drawn from the seed), so its own initial values are never used.",
        "Either way every computation runs in @triton.jit kernels; torch only allocates, "
        "views and copies.",
    ]
    if written:
        lines.append(f"The forward updates {written} in place (training mode); so must yours.")
    if description["unscalable"]:
        lines.append(f"Its sizes cannot be scaled down ({description['unscalable']}): it has "
                     f"its large case only, which Triton's CPU interpreter does not run.")
    lines.append("FLOP and byte counts are estimates from a meta-device trace.")
    return "\n".join(lines)


def spec_of(path: Path, description: dict[str, Any]) -> OperatorSpec:
    from kgb_core.api import ModuleContract
    from kgb_source_kernelbench import client

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    cases_found = description["cases"]
    cases = []
    if "small" in cases_found:
        cases.append(ShapeCase("small", cases_found["small"]["params"], SMALL))
    if "heldout" in cases_found:
        cases.append(ShapeCase("heldout", cases_found["heldout"]["params"], SMALL, heldout=True))
    cases.append(ShapeCase("large", cases_found["large"]["params"], LARGE))
    contract = ModuleContract(inputs=len(description["inputs"]),
                              state=tuple(description["state"]))
    written = tuple(len(description["inputs"]) + description["state"].index(name)
                    for name in description["written"])
    where = str(path.resolve())

    def make_inputs(ctx: Any) -> list[Any]:
        if getattr(ctx, "ahead", False):
            # A draw ahead (kgb's InputContext.ahead) fills the context's draw cache; the
            # problem's own code draws these values in its host: nothing to draw ahead.
            return []
        return client.draw(where, dict(ctx.params), ctx.seed, ctx.device)

    def reference(*arguments: Any) -> Any:
        return client.reference(where, contract, written, list(arguments))

    def time_baseline(settings: Mapping[str, Any], sets: Any) -> Any:
        return client.time_reference(where, contract, dict(settings), sets)

    return OperatorSpec(
        source=SOURCE, name=operator_name(path), signature=_signature(description),
        description=_text(path, description, digest), reference=reference,
        make_inputs=make_inputs, cases=tuple(cases), dtypes=DTYPES,
        flops=partial(_counts, cases_found, "flops"),
        bytes_moved=partial(_counts, cases_found, "bytes"),
        reduce_dim=partial(_reduce_dim, cases_found),
        tags=frozenset({"kernelbench", f"sha256:{digest[:16]}"}),
        mutated_args=written, module_contract=contract, time_baseline=time_baseline)


def build(path: str = "") -> list[OperatorSpec]:
    """The operators of every problem file in ``path`` (none while it is unset)."""
    from kgb_core.api import described
    from kgb_source_kernelbench import client

    return described(SOURCE, problem_files(path) if path else [],
                     lambda file: client.describe(str(file.resolve())), spec_of)


@hookimpl
def kgb_register_sources(register):
    from kgb_core.api import problem_folder_source

    register(problem_folder_source(
        SOURCE, "KernelBench-format problem files (Model, get_inputs, get_init_inputs) from a "
                "folder: --source-opt kernelbench.path=DIR", build))
