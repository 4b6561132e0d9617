"""The scaffolding every operator source shares, so a source writes only its operators.

A source of hand-written specs (ATen, vLLM, cuBLAS) is a package of *families*, each a module
with ``operators() -> list[OperatorSpec]``, and a folder of shipped reference kernels:

- ``family_source`` makes the ``OperatorSource``: it imports each family, and adds a tag to the
  operators a set names (the cross-chip set, a published benchmark's operators);
- ``KernelFiles`` reads ``kernels/<name>.py`` (cached) and fills templates whose
  ``__FIELD__`` markers differ between the operators made from them;
- ``spec_factory`` makes the source's ``op(name, **fields)``: an ``OperatorSpec`` of that source
  whose reference kernel is ``kernels/<name>.py`` unless given, with sequences made tuples and
  an unset (``None``) field left at ``OperatorSpec``'s default. It takes ``OperatorSpec``'s own
  field names, so a new field needs no change here.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from kgb_core.operators import OperatorSource, OperatorSpec

# Fields given as any sequence or mapping, stored as OperatorSpec holds them.
_CONVERTED: Mapping[str, Callable[[Any], Any]] = {
    "cases": tuple, "dtypes": tuple, "mutated_args": tuple, "tags": frozenset,
    "tolerances": dict, "timed_varied_args": lambda value: None if value is None else tuple(value),
}


class KernelFiles:
    """A source's shipped reference kernels: ``folder/<name>.py``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._texts: dict[str, str] = {}

    def text(self, name: str) -> str:
        """The text of ``<name>.py``, read once."""
        if name not in self._texts:
            self._texts[name] = (self.folder / f"{name}.py").read_text()
        return self._texts[name]

    def template(self, template: str, **fields: str) -> Callable[[], str]:
        """A reference kernel made by filling ``<template>.py``'s ``__FIELD__`` markers:
        operators that differ only in one expression (unary math, the S/D/C/Z variants of a
        routine) share one file, so a fix to it reaches every one of them."""

        def render() -> str:
            text = self.text(template)
            for key, value in fields.items():
                marker = f"__{key.upper()}__"
                if marker not in text:
                    raise KeyError(f"template {template} has no {marker}")
                text = text.replace(marker, value)
            return text

        return render


def spec_factory(source: str, kernels: KernelFiles,
                 **defaults: Any) -> Callable[..., OperatorSpec]:
    """``op(name, **fields)``: an ``OperatorSpec`` of ``source``, ``defaults`` under the given
    fields (a source's usual dtypes), its reference kernel ``kernels/<name>.py`` unless one is
    given."""

    def op(name: str, **fields: Any) -> OperatorSpec:
        values = {key: value for key, value in {**defaults, **fields}.items()
                  if value is not None}
        for key, convert in _CONVERTED.items():
            if key in values:
                values[key] = convert(values[key])
        values.setdefault("reference_kernel", lambda: kernels.text(name))
        return OperatorSpec(source=source, name=name, **values)

    return op


def family_source(*, name: str, description: str, package: str, families: Sequence[str],
                  tagged: Mapping[str, Collection[str]] | None = None,
                  **source_fields: Any) -> OperatorSource:
    """The source whose operators are those of ``package``'s ``families`` (each a module with
    ``operators()``), in that order; ``tagged`` maps a tag to the operator names that get it.
    ``source_fields``: the rest of ``OperatorSource`` (``cross_chip_tag``, options)."""
    tags = {tag: frozenset(names) for tag, names in (tagged or {}).items()}

    def build() -> list[OperatorSpec]:
        specs: list[OperatorSpec] = []
        for family in families:
            specs.extend(importlib.import_module(f"{package}.{family}").operators())
        return [dataclasses.replace(spec, tags=spec.tags | added) if added else spec
                for spec in specs
                for added in [frozenset(tag for tag, names in tags.items()
                                        if spec.name in names)]]

    return OperatorSource(name=name, description=description, build=build, **source_fields)
