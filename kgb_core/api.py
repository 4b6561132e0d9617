"""What a plugin imports from kgb: one module, so that no plugin reaches into the core's
internals and the core can move its modules without breaking one.

``from kgb_core.api import OperatorSpec, TorchDeviceBackend`` loads only the modules those
names live in (PEP 562's module ``__getattr__``): importing this module imports neither torch
nor triton, since a backend's registration must stay light (``kgb_core.plugin_conformance``
checks it), and a name that needs torch loads it when a plugin first asks for that name.
``tests/test_api.py`` checks that every plugin under ``plugins/`` imports the core through this
module alone.
"""

from __future__ import annotations

import importlib
from typing import Any

from kgb_core.hookspecs import hookimpl

# Each public name and the module that defines it, grouped by the kind of plugin that needs it.
_WHERE: dict[str, str] = {
    # every plugin
    "UserError": "kgb_core.errors",
    # operator sources
    "OperatorSource": "kgb_core.operators",
    "OperatorSpec": "kgb_core.operators",
    "ShapeCase": "kgb_core.operators",
    "InputContext": "kgb_core.operators",
    "SMALL": "kgb_core.operators",
    "LARGE": "kgb_core.operators",
    "KNOWN_DTYPES": "kgb_core.operators",
    "Tolerance": "kgb_core.operators",
    "family_source": "kgb_core.source_kit",
    "KernelFiles": "kgb_core.source_kit",
    "spec_factory": "kgb_core.source_kit",
    # sources of other benchmarks' problem files: the sandboxed problem host and its server
    "ProblemServer": "kgb_core.problem_server",
    "serve": "kgb_core.problem_server",
    "describe_value": "kgb_core.problem_server",
    "host": "kgb_core.problem_host",
    "described": "kgb_core.problem_host",
    "device_of": "kgb_core.problem_host",
    "operator_name": "kgb_core.problem_host",
    "problem_folder_source": "kgb_core.problem_host",
    "problem_root": "kgb_core.problem_host",
    "ProblemHostError": "kgb_core.problem_host",
    "ModuleContract": "kgb_core.module_contract",
    "ModuleKernel": "kgb_core.module_contract",
    "PackedContract": "kgb_core.module_contract",
    "pack": "kgb_core.evaluation.exchange",
    "ExchangeError": "kgb_core.evaluation.exchange",
    # chip backends
    "Backend": "kgb_core.backends",
    "Availability": "kgb_core.backends",
    "ProbeCheck": "kgb_core.backends",
    "ProbeSteps": "kgb_core.backends",
    "ChipProfile": "kgb_core.backends",
    "Quirks": "kgb_core.backends",
    "visible_device": "kgb_core.backends",
    "TorchDeviceBackend": "kgb_core.torch_device",
    "command_on_path": "kgb_core.torch_device",
    "module_installed": "kgb_core.torch_device",
    "triton_backends_installed": "kgb_core.torch_device",
    "Timer": "kgb_core.timing",
    "Timing": "kgb_core.timing",
    "TimingSettings": "kgb_core.timing",
    "EventTimer": "kgb_core.timing",
    "WallClockTimer": "kgb_core.timing",
    # generation methods
    "Method": "kgb_core.methods",
    "Candidate": "kgb_core.methods",
    "GenerationContext": "kgb_core.methods",
    # checks a plugin runs itself (a source's cross-check against the library it mirrors)
    "clone_tree": "kgb_core.evaluation.checker",
    "compare_outputs": "kgb_core.evaluation.compare",
    # a plugin's own command printing a table as kgb's do
    "render_table": "kgb_core.report",
}

__all__ = ["hookimpl", *_WHERE]


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"kgb_core.api has no {name!r}; what a plugin may import is "
                             f"listed in kgb_core/api.py") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
