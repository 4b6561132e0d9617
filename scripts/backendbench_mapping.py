"""Write docs/backendbench.md: how a BackendBench kernel for an ATen op maps onto kgb's aten.<op>.

``python scripts/backendbench_mapping.py`` (``--check`` fails when the file is out of date).
For each of kgb's aten operators: the ATen overload whose positional arguments kgb's
``kernel(...)`` passes in the same order (the first argument's name aside: kgb says ``x``,
ATen ``self``), or why none does. A BackendBench ``<op>_kernel_impl(*args, **kwargs)`` is
called by kgb with those positional arguments (kgb_methods/files.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "backendbench.md"

HEADER = """# BackendBench kernels under kgb

[BackendBench](https://github.com/meta-pytorch/BackendBench) keeps one folder per ATen operator,
`<op>/<op>_implementation_v<k>.py`, each defining `<op>_kernel_impl(*args, **kwargs)`. Point
kgb's `files` method at that folder (`[method] name = "files"`, `path = "generated_kernels/"`):
each file becomes a candidate for kgb's `aten.<op>` (sample k-1), and kgb calls
`<op>_kernel_impl` with the positional arguments of its own `kernel(...)` signature (`kgb ops
show aten.<op>`), never with keywords. The table says, for every kgb aten operator, the first
ATen overload whose positional arguments line up with kgb's by kind (a tensor where kgb passes
a tensor, a number or flag where kgb passes one; names differ: kgb's `x` is ATen's `self`), so
a kernel written for that overload gets what it expects; where none does, a BackendBench
kernel must take kgb's arguments as listed.
Operators ATen does not have under that name take no BackendBench folder.

Written by `scripts/backendbench_mapping.py` from this kgb's operators and this torch's schemas.

| kgb operator | kgb arguments | ATen overload with the same positional order |
|---|---|---|
"""


def _kgb_kinds(signature: str, count: int) -> list[bool]:
    """Whether each of kgb's arguments is a tensor (``Tensor`` in its annotation)."""
    inside = signature.partition("(")[2].rpartition(")")[0]
    kinds, depth, current = [], 0, ""
    for char in inside + ",":
        depth += char in "[(" and 1 or (-1 if char in "])" else 0)
        if char == "," and depth == 0:
            kinds.append("Tensor" in current)
            current = ""
        else:
            current += char
    return (kinds + [False] * count)[:count]


def overload_for(name: str, signature: str, arguments: list[str]) -> str:
    """The first ATen overload (``out=`` variants aside) with at least as many positional
    arguments as kgb's, tensors where kgb's are tensors and nothing else where they are not."""
    import torch

    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return "none: ATen has no op of this name"
    kinds = _kgb_kinds(signature, len(arguments))
    for overload in packet.overloads():
        schema = getattr(packet, overload)._schema
        if any(a.name == "out" for a in schema.arguments):
            continue
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(positional) >= len(arguments) and all(
                ("Tensor" in str(a.type)) == kind for a, kind in zip(positional, kinds)):
            return (f"`aten.{name}.{overload}"
                    f"({', '.join(a.name for a in positional[:len(arguments)])})`")
    return "none: a BackendBench kernel must take kgb's arguments as listed"


def render() -> str:
    from kgb_core.plugins import load_registry

    rows = []
    for spec in sorted(load_registry().operators(["aten"]), key=lambda s: s.name):
        arguments = spec.argument_names()
        overload = overload_for(spec.name, spec.signature, arguments)
        rows.append(f"| `{spec.id}` | {', '.join(arguments)} | {overload} |")
    return HEADER + "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            sys.exit(f"{OUT} is out of date: run python scripts/backendbench_mapping.py")
        return
    OUT.write_text(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
