"""Counting Triton kernel launches, compiled or interpreted.

Every launch, ``fn[grid](...)`` or through an autotuner or heuristics wrapper, ends in
``run`` of a ``JITFunction`` (compiled) or an ``InterpretedFunction`` (TRITON_INTERPRET=1);
this holds for Triton 3.0 to 3.9. Wrapping ``run`` on those classes counts launches without
touching a kernel.
"""

from __future__ import annotations

import functools
from typing import Any


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
        self.kernel_names: list[str] = []
        self._installed = False

    def reset(self) -> None:
        self.count = 0
        self.kernel_names = []

    def install(self) -> None:
        if self._installed:
            return
        for cls in _launch_classes():
            _wrap_run(cls, self)
        self._installed = True


def _launch_classes() -> list[type]:
    classes: list[type] = []
    from triton.runtime.jit import JITFunction

    classes.append(JITFunction)
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - every Triton we support has it
        pass
    else:
        classes.append(InterpretedFunction)
    return classes


def _wrap_run(cls: type, counter: LaunchCounter) -> None:
    original = cls.run

    @functools.wraps(original)
    def counted_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("warmup", False):
            counter.count += 1
            counter.kernel_names.append(getattr(self, "__name__", "?"))
        return original(self, *args, **kwargs)

    cls.run = counted_run
