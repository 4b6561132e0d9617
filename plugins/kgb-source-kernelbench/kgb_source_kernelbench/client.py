"""The harness's and the judge's requests to the KernelBench problem host (``host.py``, run in
the sandbox by ``kgb_core.problem_host``)."""

from __future__ import annotations

import os
from typing import Any, Sequence

from kgb_core.api import ProblemHostError, device_of, host

SERVER = "kgb_source_kernelbench.host"
__all__ = ["ProblemHostError", "describe", "draw", "reference", "time_reference"]


def _host(path: str, device: str = "cpu") -> Any:
    """The host for the problem file ``path`` on ``device``: one per problem folder."""
    return host(SERVER, os.path.dirname(path), device)


def describe(path: str) -> dict[str, Any]:
    return _host(path).request({"op": "describe", "path": path})["description"]


def draw(path: str, params: dict[str, Any], seed: int, device: str) -> list[Any]:
    """One case's values, drawn on the CPU (as kgb draws every input) by the device's host,
    which then knows the case of the values it is handed back."""
    chosen = _host(path, device)
    return list(chosen.values(chosen.request({"op": "inputs", "path": path, "params": params,
                                              "seed": seed}), device))


def reference(path: str, contract: Any, written: Sequence[int], arguments: Sequence[Any]) -> Any:
    """The problem's Model on ``arguments``; the arguments it writes are written here too."""
    device = device_of(arguments)
    chosen = _host(path, device)
    reply = chosen.request({"op": "reference", "path": path,
                            "contract": contract.to_dict(), "written": list(written)},
                           list(arguments))
    output, after = chosen.values(reply, device)
    for index, value in zip(written, after):
        arguments[index].copy_(value)
    return output


def time_reference(path: str, contract: Any, settings: dict[str, Any],
                   sets: Sequence[Sequence[Any]]) -> Any:
    from kgb_core.api import Timing

    reply = _host(path, device_of(sets[0])).request(
        {"op": "time", "path": path, "contract": contract.to_dict(), "settings": settings},
        [list(one) for one in sets])
    return Timing(**reply["timing"])
