"""Options of operator sources: ``[sources.<name>]`` in a run config, ``--source-opt
NAME.KEY=VALUE`` on the command line, the same in every process that builds operators.

A source declares the keys it takes (``OperatorSource.options``); unknown ones are refused
with the nearest known key. The harness configures its registry from them, and hands them to
each judge through ``KGB_SOURCE_OPTIONS`` (JSON), so that the operator a judge checks a
candidate against is the one the harness planned. A run's plan records them when any are set,
so ``--resume`` never mixes two runs over different problem folders.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterable, Mapping

from kgb_core.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ENVIRONMENT_VARIABLE = "KGB_SOURCE_OPTIONS"
SourceOptions = dict[str, dict[str, Any]]


def parse_assignments(items: Iterable[str]) -> SourceOptions:
    """``NAME.KEY=VALUE`` items as {name: {key: value}}; VALUE is read as a TOML value where it
    is one (``3``, ``true``, ``"a b"``, ``[1, 2]``), else kept as the string given."""
    found: SourceOptions = {}
    for item in items:
        target, equals, text = item.partition("=")
        name, dot, key = target.strip().partition(".")
        if not equals or not dot or not name or not key:
            raise UserError(f"--source-opt {item!r}: give NAME.KEY=VALUE, e.g. "
                            f"kernelbench.path=/data/KernelBench/level1")
        try:
            value = tomllib.loads(f"value = {text}")["value"]
        except tomllib.TOMLDecodeError:
            value = text
        found.setdefault(name, {})[key] = value
    return found


def merged(*layers: Mapping[str, Mapping[str, Any]]) -> SourceOptions:
    """Later layers win key by key (the command line over the config file)."""
    result: SourceOptions = {}
    for layer in layers:
        for name, values in layer.items():
            result.setdefault(name, {}).update(values)
    return result


def check(options: Any, where: str) -> SourceOptions:
    """``[sources]`` of a config as read: a table of tables."""
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise UserError(f"{where}: [sources.<name>] tables hold a source's options, e.g. "
                        f"[sources.kernelbench] path = \"...\"")
    return {name: dict(values) for name, values in options.items()}


def configure(registry: Any, options: dict[str, dict[str, Any]]) -> None:
    """Apply ``options`` to the registry's sources (an unknown source or key is refused).
    Path options are made absolute in ``options`` itself, which judges and the plan get."""
    for name, values in options.items():
        if name not in registry.names("source"):
            known = ", ".join(registry.names("source"))
            raise UserError(f"source options for {name!r}, which is not an installed source "
                            f"(installed: {known})")
        source = registry.source(name)
        source.configure(values)
        values.update(source.resolved(values))


def to_environment(options: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """What a judge's environment carries so that its registry builds the same operators."""
    return {ENVIRONMENT_VARIABLE: json.dumps(options, sort_keys=True)} if options else {}


def from_environment() -> SourceOptions:
    text = os.environ.get(ENVIRONMENT_VARIABLE, "")
    return json.loads(text) if text else {}
