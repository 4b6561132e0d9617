"""kgb core: what every source, backend and method plugin shares, and kgb as a function.

Plugins import ``hookimpl`` from here so that none of them imports pluggy itself, and
the core can change how hooks are wired without touching a plugin.

``kgb_core.evaluate(source, op)`` and ``kgb_core.evaluate_many(...)`` evaluate candidates from
Python (``kgb_core.service``: a training loop's reward, a notebook); they are looked up on
first use, so importing ``kgb_core`` stays as light as a plugin's registration needs (no torch).
"""

from typing import Any

from kgb_core.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["hookimpl", "__version__", "evaluate", "evaluate_many", "EvalRequest",
           "EvaluationService"]

_SERVICE_NAMES = ("evaluate", "evaluate_many", "EvalRequest", "EvaluationService")


def __getattr__(name: str) -> Any:
    if name in _SERVICE_NAMES:
        from kgb_core import service

        return getattr(service, name)
    raise AttributeError(f"module 'kgb_core' has no attribute {name!r}")
