"""Counting Triton kernel launches, compiled or interpreted, and switching them off.

Every launch, ``fn[grid](...)`` or through an autotuner or heuristics wrapper, ends in
``run`` of a ``JITFunction`` (compiled) or an ``InterpretedFunction`` (TRITON_INTERPRET=1);
this holds for Triton 3.0 to 3.9. Wrapping ``run`` on those classes counts launches without
touching a kernel, notes the stream each launch went to (a launch on a stream other than the
harness's hides from its timer), and in ghost mode skips the launch entirely: ghost replay
runs the candidate with every Triton kernel a no-op, to see whether they did the work.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from kgb_core.evaluation.recorder import suspended


class LaunchCounter:
    def __init__(self, stream_probe: Callable[[], Any] | None = None) -> None:
        self.count = 0
        self.kernel_names: list[str] = []
        self.streams: set[Any] = set()
        self.ghost = False
        self._stream_probe = stream_probe
        self._installed = False

    def reset(self) -> None:
        self.count = 0
        self.kernel_names = []
        self.streams = set()

    def install(self) -> None:
        if self._installed:
            return
        for cls in launch_classes():
            _wrap_run(cls, self)
        self._installed = True

    def note_launch(self, kernel_name: str) -> None:
        self.count += 1
        if len(self.kernel_names) < 64:
            self.kernel_names.append(kernel_name)
        if self._stream_probe is not None:
            self.streams.add(self._stream_probe())


def launch_classes() -> list[type]:
    """The classes every Triton launch goes through (also guarded against replacement)."""
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
            counter.note_launch(getattr(self, "__name__", "?"))
            if counter.ghost:
                return None
        with suspended():  # the interpreter's own data movement is no candidate torch op
            return original(self, *args, **kwargs)

    cls.run = counted_run
