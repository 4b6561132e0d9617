"""Counting Triton kernel launches, compiled or interpreted, and switching them off.

Every launch, ``fn[grid](...)`` or through an autotuner or heuristics wrapper, ends in
``run`` of a ``JITFunction`` (compiled) or an ``InterpretedFunction`` (TRITON_INTERPRET=1);
this holds for Triton 3.0 to 3.9. Wrapping ``run`` on those classes counts launches without
touching a kernel, notes the stream each launch went to (a launch on a stream other than the
harness's hides from its timer), and in ghost mode skips the launch entirely: ghost replay
runs the candidate with every Triton kernel a no-op, to see whether they did the work.

The same wrapper checks each launch against the backend's quirks where the harness can see the
numbers: ``num_warps`` against ``max_num_warps``, and every integer argument whose name holds
``BLOCK`` (``BLOCK_SIZE``, ``BLOCK_M``, ``XBLOCK``) against ``max_block_size``. That is a
per-dimension check of the launch's own arguments, not of every ``tl.arange`` in the body; on a
chip the compiler enforces the rest, and in emulation (``kgb_core.emulation``) nothing else does.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from kgb_core.evaluation.recorder import (LAUNCH_RANGE, modes_depth, profile_range,
                                          suspended)


class LaunchCounter:
    def __init__(self, stream_probe: Callable[[], Any] | None = None,
                 max_num_warps: int | None = None, max_block_size: int | None = None) -> None:
        self.count = 0
        self.kernel_names: list[str] = []
        self.streams: set[Any] = set()
        self.limit_violations: list[str] = []
        # The recorders' depth on the mode stacks while a call is recorded (None: not
        # recorded); a launch that finds other depths found the recorders switched off.
        self.expected_modes: tuple[int, int] | None = None
        self.mode_violations: list[str] = []
        # A checked call's profile is on (recorder.OpProfile): launches mark their range.
        self.profiling = False
        self.ghost = False
        self.max_num_warps = max_num_warps
        self.max_block_size = max_block_size
        # Where launches are queued now; the runner sets it once its device is set up.
        self.stream_probe = stream_probe
        # What changed in the device's state the timer depends on (Backend.device_state_watch),
        # checked at every launch: no launch may run under a change undone before the call ends.
        self.state_probe: Callable[[], list[str]] | None = None
        self.state_violations: list[str] = []
        # A checked call's staged copies (recorder.StagedCopies): each launch first keeps the
        # buffers they assembled, as the kernel finds them. None outside checked calls.
        self.staged: Any = None
        self._installed = False

    @classmethod
    def for_backend(cls, backend: Any) -> "LaunchCounter":
        """The counter a worker installs: the backend's stream probe (where it has streams) and
        its launch limits."""
        return cls(stream_probe=backend.current_stream
                   if backend.current_stream() is not None else None,
                   max_num_warps=backend.quirks.max_num_warps,
                   max_block_size=backend.quirks.max_block_size)

    def reset(self) -> None:
        self.count = 0
        self.kernel_names = []
        self.streams = set()
        self.limit_violations = []
        self.mode_violations = []
        self.state_violations = []

    def check_limits(self, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> str | None:
        """Why this launch exceeds the backend's limits, or None when it does not."""
        name = getattr(kernel, "__name__", "?")
        num_warps = kwargs.get("num_warps")
        if (self.max_num_warps and isinstance(num_warps, int)
                and num_warps > self.max_num_warps):
            return (f"{name} launched with num_warps={num_warps}; this backend allows at most "
                    f"{self.max_num_warps}")
        if self.max_block_size:
            named = dict(zip(getattr(kernel, "arg_names", ()), args))
            named.update(kwargs)
            for arg, value in named.items():
                if ("BLOCK" in arg.upper() and isinstance(value, int)
                        and not isinstance(value, bool) and value > self.max_block_size):
                    return (f"{name} launched with {arg}={value}; this backend allows at most "
                            f"{self.max_block_size} elements per block dimension")
        return None

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
        if self.staged is not None and self.staged.assembling:
            self.staged.at_launch(kernel_name)
        if self.stream_probe is not None:
            self.streams.add(self.stream_probe())
        if self.state_probe is not None and not self.state_violations:
            changed = self.state_probe()
            if changed:
                self.state_violations.append(f"{kernel_name} was launched with "
                                             f"{'; '.join(changed)} changed")


class LaunchLimitExceeded(RuntimeError):
    """A launch asked for more warps or a larger block than the backend's quirks allow."""


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
        if kwargs.get("warmup", False):
            with suspended():
                return original(self, *args, **kwargs)
        name = getattr(self, "__name__", "?")
        counter.note_launch(name)
        if counter.expected_modes is not None and modes_depth() != counter.expected_modes:
            counter.mode_violations.append(f"{name} was launched with torch's mode stacks at "
                                           f"{modes_depth()}, not the recorders' "
                                           f"{counter.expected_modes}")
        violation = counter.check_limits(self, args, kwargs)
        if violation is not None:
            # Recorded before raising: a candidate that catches the error is still judged.
            counter.limit_violations.append(violation)
            raise LaunchLimitExceeded(violation)
        if counter.ghost:
            return None
        # The candidate's own code that Triton would run inside the launch runs here, where
        # the recorders see it: the grid callable and any pre-run hooks.
        grid = kwargs.get("grid")
        if callable(grid):
            kwargs["grid"] = _resolve_grid(self, grid, args, kwargs)
        hooks = list(getattr(self, "pre_run_hooks", None) or ())
        for hook in hooks:
            hook(*args, **kwargs)
        if hooks:
            self.pre_run_hooks = []
        try:
            # The interpreter's own data movement is no candidate torch op: no mode sees it,
            # and a checked call's profile knows it by the range it runs in.
            with suspended(), profile_range(LAUNCH_RANGE, counter):
                return original(self, *args, **kwargs)
        finally:
            if hooks:
                self.pre_run_hooks = hooks

    cls.run = counted_run


def _resolve_grid(fn: Any, grid: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    """The launch grid, from the kernel's arguments bound by name as Triton binds them (its
    defaults applied, launch options such as ``num_warps`` left out)."""
    import inspect

    names = list(getattr(fn, "arg_names", ()))
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    try:
        signature = inspect.signature(fn.fn)
    except (AttributeError, TypeError, ValueError):
        signature = None
    if signature is not None:
        for parameter in signature.parameters.values():
            if parameter.name not in bound and parameter.default is not inspect.Parameter.empty:
                bound[parameter.name] = parameter.default
    return grid(bound)
