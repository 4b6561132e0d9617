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

Triton treats any argument with a ``data_ptr`` as a tensor and calls its methods inside the
launch (``data_ptr`` when compiled; ``untyped_storage``, ``new_empty``, ``copy_`` in the
interpreter), where the recorders are suspended: an object of the candidate's own there runs
unrecorded torch work. So every argument must be a plain ``torch.Tensor`` with no attribute
of its own set, a number, a string, None, a dtype, or one of Triton's own values (a tuple of
those), and anything else is ``tampering`` before Triton touches it (``LaunchArguments``).
No garbage collection runs inside a launch either: a finalizer of the candidate's would run
there unrecorded.
"""

from __future__ import annotations

import functools
import gc
import time
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
        # Host seconds inside Triton's launch path since the last reset, compiling included (a
        # diagnostic for the judge's record of a call: no verdict reads it).
        self.launch_s = 0.0
        # Of launch_s, the seconds Triton spent compiling new specializations (JITFunction's
        # ``_do_compile``, Triton 3.4 on; zero where it has none): what of a check step held
        # shared is host work the device waits on (a diagnostic; no verdict reads it).
        self.compile_s = 0.0
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
        self.launch_s = 0.0
        self.compile_s = 0.0

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
        self.arguments = LaunchArguments()
        for cls in launch_classes():
            _wrap_run(cls, self)
            time_compiles(cls, self.note_compile)
        self._installed = True

    def note_compile(self, seconds: float) -> None:
        self.compile_s += seconds

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


class LaunchArgumentRefused(RuntimeError):
    """A launch was given an object whose methods Triton would call, unrecorded, inside it."""


def _plain_types() -> frozenset[type]:
    """The exact types a launch argument may have besides a tensor, taken when the harness
    starts, before any candidate could define a subclass: Python's scalars, torch's dtype,
    numpy's scalars, Triton's dtypes, and a @triton.jit function (handed to another as a
    constexpr). A ``constexpr`` is checked by its value (``LaunchArguments``)."""
    import torch

    kinds: set[type] = {int, float, bool, str, type(None), torch.dtype}
    try:
        import numpy

        kinds.update(t for t in numpy.sctypeDict.values() if isinstance(t, type))
    except ImportError:  # pragma: no cover - numpy comes with torch
        pass
    from triton.language import core

    def with_subclasses(cls: type) -> set[type]:
        found = {cls}
        for sub in cls.__subclasses__():
            found |= with_subclasses(sub)
        return found

    kinds |= with_subclasses(core.dtype)
    # A @triton.jit function handed to another as a constexpr (an activation, a combine fn).
    kinds.update(launch_classes())
    return frozenset(kinds)


def _descriptor_types() -> tuple[type, ...]:
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:  # pragma: no cover - Triton before 3.4
        return ()
    return (TensorDescriptor,)


class LaunchArguments:
    """The launch-argument check, its tables taken when the counter is installed (before any
    candidate is imported, and never changed after)."""

    def __init__(self) -> None:
        import torch

        self.plain = _plain_types()
        self.descriptors = _descriptor_types()
        # A module's weights are Parameters (KernelBench's ModelNew hands them to its kernels).
        self.tensors = (torch.Tensor, torch.nn.Parameter)
        self.sequences = (tuple, list, torch.Size)
        from triton.language import core

        # A constexpr holds a value the interpreter hands to the body as it is (and calls, if
        # it is callable): the value is checked like an argument of its own.
        self.constexpr = core.constexpr

    def problem(self, args: tuple, kwargs: dict[str, Any]) -> str | None:
        """What is wrong with a launch's arguments, or None. Only ``type()`` is asked of an
        argument until it is known to be plain: an attribute lookup could run the candidate's
        code (``__getattr__``, properties)."""
        plain, tensors = self.plain, self.tensors
        for value in args:  # the common case inline: a launch costs this on every call
            kind = type(value)
            if kind not in plain and (kind not in tensors or value.__dict__):
                break
        else:
            if all(type(value) in plain or (type(value) is tuple
                                            and all(type(item) in plain for item in value))
                   for value in kwargs.values()):
                return None
        for where, value in [*enumerate(args), *kwargs.items()]:
            problem = self._of(value, 0)
            if problem is not None:
                return f"argument {where!r} {problem}"
        return None

    def _of(self, value: Any, depth: int) -> str | None:
        kind = type(value)
        if kind in self.plain:
            return None
        if kind in self.tensors:
            # An instance attribute shadows torch's own method (data_ptr, untyped_storage).
            own = value.__dict__
            return None if not own else (f"a tensor with attributes of its own "
                                         f"({', '.join(sorted(map(str, own))[:4])}), which "
                                         f"Triton would call inside the launch, unrecorded")
        if kind in self.sequences and depth < 2:
            for item in value:
                problem = self._of(item, depth + 1)
                if problem is not None:
                    return problem
            return None
        if kind is self.constexpr and depth < 3:
            return self._of(value.value, depth + 1)
        if kind in self.descriptors:  # a TMA descriptor: its base is a tensor like any other
            return self._of(value.base, depth + 1)
        return (f"a {kind.__module__}.{kind.__qualname__}, not a tensor, a number or one of "
                f"Triton's values: Triton would call its methods inside the launch, "
                f"unrecorded")


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
        foreign = counter.arguments.problem(args, kwargs)
        if foreign is not None:
            # A tampering verdict whatever the candidate does with the error.
            counter.mode_violations.append(f"{name} was launched with {foreign}")
            if hooks:
                self.pre_run_hooks = hooks
            raise LaunchArgumentRefused(f"{name} was launched with {foreign}")
        # No collection inside the launch: a finalizer of the candidate's (``__del__`` on a
        # reference cycle) would run there, where nothing records it; it runs after.
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        began = time.perf_counter()
        try:
            # The interpreter's own data movement is no candidate torch op: no mode sees it,
            # and a checked call's profile knows it by the range it runs in.
            with suspended(), profile_range(LAUNCH_RANGE, counter):
                return original(self, *args, **kwargs)
        finally:
            counter.launch_s += time.perf_counter() - began
            if collecting:
                gc.enable()
            if hooks:
                self.pre_run_hooks = hooks

    cls.run = counted_run


def time_compiles(cls: type, note: Callable[[float], None]) -> None:
    """Hand ``note`` the seconds of each of ``cls``'s compiles, where the class compiles
    through ``_do_compile`` (JITFunction from Triton 3.4; the interpreter compiles nothing):
    the runner's ``LaunchCounter.compile_s``, and compiling ahead's count
    (``compile_ahead.compiling_only``). A candidate may rebind it: in the runner the number is
    a diagnostic, not a check."""
    original = getattr(cls, "_do_compile", None)
    if original is None:
        return

    @functools.wraps(original)
    def timed_compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            note(time.perf_counter() - began)

    cls._do_compile = timed_compile


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
