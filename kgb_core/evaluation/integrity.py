"""The integrity guard: did the candidate replace something the verdict depends on?

Before a candidate is imported, the runner records the identity of each attribute a cheat
would patch: torch's comparison, allocation, random and CUDA timing functions, every method
of ``torch.Tensor``, the clocks in ``time``, ``builtins``, Triton's launch entry points (which
carry kgb's launch counter) and every attribute of every loaded kgb module and of the classes they define. After the import
and after every call the record is compared; a replaced or removed attribute is tampering.

Only named attributes of torch's own modules are guarded, not their whole namespace: torch
sets some module attributes lazily at run time (``torch.cuda._initialized``, caches), which
would read as tampering. kgb's own modules therefore keep no mutable module-level state.
"""

from __future__ import annotations

import sys
from typing import Any

from kgb_core.evaluation.launches import launch_classes

# Not torch.manual_seed: importing torch._dynamo (which torch does lazily) rebinds it.
_TORCH_FUNCTIONS = (
    "allclose", "equal", "isclose", "isfinite", "isnan", "isinf", "where", "abs", "empty",
    "empty_like", "empty_strided", "zeros", "zeros_like", "full", "full_like", "randn", "rand",
    "randint", "Generator", "tensor", "as_strided",
)
_TORCH_CUDA_FUNCTIONS = ("synchronize", "current_stream", "Event", "Stream", "stream",
                         "set_stream", "empty_cache", "is_available", "device_count")
_CUDA_EVENT_METHODS = ("record", "synchronize", "elapsed_time", "wait", "query")
_TIME_FUNCTIONS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time",
                   "time_ns", "process_time", "sleep")
_HARNESS_PACKAGES = ("kgb_core", "kgb_backends", "kgb_sources", "kgb_methods")


def _guarded(packages: tuple[str, ...]) -> list[tuple[str, Any, tuple[str, ...] | None]]:
    """(owner name, owner, attribute names or None for every attribute); every loaded module
    of the harness's ``packages`` is guarded whole."""
    import builtins
    import threading
    import time

    import torch
    import triton

    guarded: list[tuple[str, Any, tuple[str, ...] | None]] = [
        ("builtins", builtins, None),
        ("time", time, _TIME_FUNCTIONS),
        ("torch", torch, _TORCH_FUNCTIONS),
        ("torch.Tensor", torch.Tensor, None),
        ("torch.testing", torch.testing, ("assert_close",)),
        ("torch.cuda", torch.cuda, _TORCH_CUDA_FUNCTIONS),
        ("torch.cuda.Event", torch.cuda.Event, _CUDA_EVENT_METHODS),
        ("triton", triton, ("jit", "autotune", "heuristics", "cdiv")),
        # Where threads a call starts are recorded (recorder.install_thread_recording).
        ("threading.Thread", threading.Thread, ("run", "start")),
    ]
    guarded += [(f"{cls.__module__}.{cls.__qualname__}", cls, ("run", "__getitem__"))
                for cls in launch_classes()]
    # What the runner's channel is made of: its replies are JSON over a socket.
    import json.decoder
    import json.encoder
    import socket

    guarded += [("json", json, None), ("json.encoder", json.encoder, None),
                ("json.decoder", json.decoder, None), ("json.JSONEncoder", json.JSONEncoder, None),
                ("json.JSONDecoder", json.JSONDecoder, None), ("socket.socket", socket.socket, None)]
    try:
        import triton.testing as triton_testing
    except ImportError:  # pragma: no cover
        pass
    else:
        guarded.append(("triton.testing", triton_testing, ("do_bench",)))
    for name, module in sorted(sys.modules.items()):
        if name.split(".")[0] in packages and module is not None:
            guarded.append((name, module, None))
            # The classes it defines too: a method replaced through the class (the timer's
            # measure, the guard's own changes) is no module attribute.
            for attribute, value in sorted(vars(module).items()):
                if isinstance(value, type) and value.__module__ == name:
                    guarded.append((f"{name}.{attribute}", value, None))
    return guarded


def _read(owner: Any, names: tuple[str, ...] | None) -> dict[str, Any]:
    if names is None:
        try:
            return dict(vars(owner))
        except TypeError:
            return {}
    missing = object()
    values = {name: getattr(owner, name, missing) for name in names}
    return {name: value for name, value in values.items() if value is not missing}


class IntegrityGuard:
    """What a candidate may not replace, read before it runs. ``plugin_packages``: the
    packages of the plugins loaded in this process besides kgb's own (a runner's backend
    plugin, whose timer a candidate would otherwise be free to replace)."""

    def __init__(self, plugin_packages: tuple[str, ...] = ()) -> None:
        self._guarded = _guarded(_HARNESS_PACKAGES + tuple(plugin_packages))
        # The original objects are kept alive, so a replacement can never reuse their id().
        self._before = {name: _read(owner, names) for name, owner, names in self._guarded}

    def changes(self) -> list[str]:
        """Attributes replaced, removed or (on whole namespaces) added, as ``owner.name``."""
        changed = []
        for name, owner, names in self._guarded:
            before = self._before[name]
            now = _read(owner, names)
            for key, value in before.items():
                if key not in now:
                    changed.append(f"{name}.{key} (removed)")
                elif now[key] is not value:
                    changed.append(f"{name}.{key}")
            if names is None:
                for key in now.keys() - before.keys():
                    if name != "builtins" or key != "_":
                        changed.append(f"{name}.{key} (added)")
        return changed
