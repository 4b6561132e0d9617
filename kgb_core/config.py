"""Run configuration: a TOML file, then CLI flags on top.

Every section and key is known here, so a typo is one clear error instead of a silently
ignored setting; keys under ``[method]`` other than ``name`` belong to the method, which
declares them, typed (``Method.options``), and the core checks their types.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kgb_core.errors import UserError
from kgb_core.labels import check_label

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_DB = "kgb-results.db"
EXECUTORS = ("local", "ray")


@dataclass
class RunConfig:
    sources: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    backend: str | None = None
    # Apply this installed backend's quirks to ``backend`` (the CPU interpreter by default):
    # emulation, labelled as such in every result (``kgb_core.emulation``).
    emulate: str | None = None
    db: str = DEFAULT_DB
    # "" is the method the installed plugins declare the default (``Method.default``: the
    # reference method's known-good kernels), resolved when the sweep is planned.
    method: str = ""
    method_options: dict[str, Any] = field(default_factory=dict)
    # ``[method] label``: the method's name in the store and the report (kgb_core/labels.py);
    # None: derived from the plugin and its options.
    method_label: str | None = None
    seeds: list[int] = field(default_factory=lambda: [0, 1])
    timeout_s: float = 300.0
    worker_reuse: bool = True
    timing: bool = True
    timing_settings: dict[str, float] = field(default_factory=dict)
    # Stored baselines (kgb_core/evaluation/baselines.py): a file, "none" (each judge keeps its
    # own for its life), or None: the machine's file where the backend's timings measure a
    # chip. ``retime_baselines``: measure every stored one again, once, in this run.
    baselines: str | None = None
    retime_baselines: bool = False
    token_budget: int | None = None
    cost_budget_usd: float | None = None
    # Scale-out (docs/scale-out.md). None of these change what a run is (its plan key), so a
    # sweep can be resumed with more devices or another executor.
    concurrency: int = 1            # operators being generated at once (generation threads)
    devices: str | None = None      # "0,1", "all"; None: one unpinned worker
    # Worker processes per device (or for the unpinned worker); above 1 only with timing off.
    workers_per_device: int = 1
    # Where judges share a device: seconds a timing may wait for another to share its drain
    # (device_lock.py, ``DeviceLock.gather_s``); 0: none.
    timing_gather_s: float = 0.0
    executor: str = "local"         # "local" (worker processes here) or "ray"
    ray_address: str | None = None  # an existing Ray cluster; None starts a local instance
    # ``[sources.<name>]``: each source's options (kgb_core/source_options.py).
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict)


# section -> key -> (RunConfig field, accepted Python types)
_SCHEMA: dict[str, dict[str, tuple[str, tuple[type, ...]]]] = {
    "run": {
        "sources": ("sources", (list,)),
        "ops": ("ops", (list,)),
        "tags": ("tags", (list,)),
        "backend": ("backend", (str,)),
        "emulate": ("emulate", (str,)),
        "db": ("db", (str,)),
        "token_budget": ("token_budget", (int,)),
        "cost_budget_usd": ("cost_budget_usd", (int, float)),
        "concurrency": ("concurrency", (int,)),
        "devices": ("devices", (str, list)),
        "workers_per_device": ("workers_per_device", (int,)),
        "timing_gather_s": ("timing_gather_s", (int, float)),
        "executor": ("executor", (str,)),
        "ray_address": ("ray_address", (str,)),
    },
    "evaluation": {
        "seeds": ("seeds", (list,)),
        "timeout_s": ("timeout_s", (int, float)),
        "worker_reuse": ("worker_reuse", (bool,)),
        "timing": ("timing", (bool,)),
        "baselines": ("baselines", (str,)),
        "retime_baselines": ("retime_baselines", (bool,)),
    },
    "timing": {
        "warmup_ms": ("timing_settings", (int, float)),
        "rep_ms": ("timing_settings", (int, float)),
        "min_repetitions": ("timing_settings", (int,)),
        "max_repetitions": ("timing_settings", (int,)),
        "slow_call_repetitions": ("timing_settings", (int,)),
        "slow_call_budget_ms": ("timing_settings", (int, float)),
        "median_interval": ("timing_settings", (int, float)),
        "median_floor": ("timing_settings", (int,)),
        "whole_repetition_budget": ("timing_settings", (bool,)),
    },
}
_METHOD_SECTION = "method"
_SOURCES_SECTION = "sources"


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(sorted(choices))}"


def load_config(path: str | Path) -> RunConfig:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"config file {path} does not exist")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UserError(f"{path} is not valid TOML: {error}") from None
    return config_from_mapping(data, where=str(path))


def config_from_mapping(data: dict[str, Any], where: str = "config") -> RunConfig:
    config = RunConfig()
    sections = list(_SCHEMA) + [_METHOD_SECTION, _SOURCES_SECTION]
    for section, values in data.items():
        if section not in sections:
            raise UserError(f"{where}: unknown section [{section}]{_suggest(section, sections)}")
        if not isinstance(values, dict):
            raise UserError(f"{where}: [{section}] must be a table")
        if section == _METHOD_SECTION:
            _read_method(config, values, where)
            continue
        if section == _SOURCES_SECTION:
            from kgb_core.source_options import check

            config.source_options = check(values, where)
            continue
        schema = _SCHEMA[section]
        for key, value in values.items():
            if key not in schema:
                raise UserError(f"{where}: unknown key {key!r} in [{section}]"
                                f"{_suggest(key, list(schema))}")
            attribute, types = schema[key]
            if isinstance(value, bool) and bool not in types:
                raise UserError(f"{where}: [{section}] {key} must be {types[0].__name__}")
            if not isinstance(value, types):
                raise UserError(f"{where}: [{section}] {key} must be "
                                f"{' or '.join(t.__name__ for t in types)}, got "
                                f"{type(value).__name__}")
            if attribute == "timing_settings":
                config.timing_settings[key] = value
            elif attribute == "devices" and isinstance(value, list):
                if not all(isinstance(d, int) and not isinstance(d, bool) for d in value):
                    raise UserError(f"{where}: [run] devices must be \"all\", \"0,1\" or a "
                                    f"list of device indices")
                config.devices = ",".join(str(d) for d in value)
            else:
                setattr(config, attribute, value)
    _validate_lists(config, where)
    return config


def _read_method(config: RunConfig, values: dict[str, Any], where: str) -> None:
    options = dict(values)
    name = options.pop("name", config.method)
    if not isinstance(name, str):
        raise UserError(f"{where}: [method] name must be a string")
    config.method = name
    if "label" in options:
        config.method_label = check_label(options.pop("label"), where)
    config.method_options = options


def _validate_lists(config: RunConfig, where: str) -> None:
    for attribute, item_type in (("sources", str), ("ops", str), ("tags", str), ("seeds", int)):
        items = getattr(config, attribute)
        if not all(isinstance(i, item_type) and not isinstance(i, bool) for i in items):
            raise UserError(f"{where}: {attribute} must be a list of {item_type.__name__}")
    if not config.seeds:
        raise UserError(f"{where}: seeds must name at least one seed")
    if config.timeout_s <= 0:
        raise UserError(f"{where}: timeout_s must be positive")
    if config.concurrency < 1:
        raise UserError(f"{where}: concurrency must be at least 1")
    if config.workers_per_device < 1:
        raise UserError(f"{where}: workers_per_device must be at least 1")
    if config.timing_gather_s < 0:
        raise UserError(f"{where}: timing_gather_s must be 0 or more seconds")
    if config.executor not in EXECUTORS:
        raise UserError(f"{where}: executor {config.executor!r} is not known"
                        f"{_suggest(config.executor, list(EXECUTORS))}")


def apply_overrides(config: RunConfig, **overrides: Any) -> RunConfig:
    """CLI flags win over the file; a flag left unset (None or empty) keeps the file's value."""
    known = {f.name for f in fields(RunConfig)}
    for key, value in overrides.items():
        if key not in known:
            raise KeyError(key)
        if value is None or value == [] or value == ():
            continue
        setattr(config, key, list(value) if isinstance(value, tuple) else value)
    _validate_lists(config, "command line")
    return config


def validate_method_options(config: RunConfig, method: Any) -> None:
    """Unknown keys (a typo) and values of the wrong type, for the method's declared options
    (``Method.options``), before the method sees them."""
    from kgb_core.methods import check_options

    allowed = method.option_keys()
    unknown = sorted(set(config.method_options) - allowed)
    if unknown:
        hint = f"; it accepts: {', '.join(sorted(allowed))}" if allowed else "; it takes none"
        raise UserError(f"method {config.method!r} has no option {unknown[0]!r}{hint}")
    check_options(config.method, method.options, config.method_options)
