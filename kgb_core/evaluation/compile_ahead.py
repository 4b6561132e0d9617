"""A candidate's Triton kernels compiled ahead, by a process that needs no device.

Why: a judge about to time a candidate waits for the check steps under way on the device to
end (``device_lock.py``: the drain), and every other judge waits with it. On the H100 those
drains took about as long as the timings themselves, and Triton compiling inside the runner's
launches was the largest part of the steps: 0.155 s of a 0.271 s trials step and 0.150 s of a
0.168 s held-out step, 30 % of all the seconds held shared (``benchmarks/RESULTS.md``,
twenty-fourth session). Compiling is host work; the device only waits for it.

It cannot simply be done with the lock let go: the runner is the candidate's process, and one
that said "compiling" could be running device work beside another candidate's timing. So the
compiling moves to a process that cannot reach the device at all. ``compile_calls`` calls the
candidate's entry point on *meta* tensors shaped like its inputs (shape, strides, dtype; no
values, no memory), with Triton's active driver replaced by one that only names the device's
target (``CompileOnlyDriver``) and every launch made a compile (``warmup=True``; an autotuner
compiles each of its configs). Triton writes each specialization into its file cache, under
the same key a launch on the device computes: pointer arguments specialize on their address
modulo 16, and a meta tensor's address is its offset in bytes, as a device tensor's is its
(aligned) allocation's plus that offset. The candidate's runner, pointed at that cache, then
loads instead of compiling.

What the candidate can do there: run its own code on shapes it would be handed anyway, and
write into a cache only its own runner reads. The judge never reads it. Code that needs values
(``.item()``, a data-dependent branch) fails on meta tensors; the calls before it have
compiled, and the rest compile in the runner as before.

Where it stands: this module (tested on a machine without a GPU, compiling for an H100's
target) is the first piece. The judge does not run it yet: that needs a sandbox without the
GPU's device nodes, and a GPU run to show that the runner's compiles hit what it wrote.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from kgb_core.evaluation.launches import time_compiles


@dataclass
class CompileAheadReport:
    """What ``compile_calls`` did: calls made, kernels compiled, and why calls stopped."""

    calls: int = 0
    compiled: int = 0
    compile_s: float = 0.0
    # One line per call that raised (code that needs values stops a call; what it launched
    # before that has compiled).
    stopped: list[str] = field(default_factory=list)

    def note_compile(self, seconds: float) -> None:
        self.compiled += 1
        self.compile_s += seconds


class CompileOnlyDriver:
    """Triton's active driver, for compiling only: it names the target and device 0, and has
    no stream. Anything else Triton asks of it (a benchmark, a launch) fails loudly."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def __getattr__(self, name: str) -> Any:
        # AttributeError, so that Triton's own ``hasattr`` probes read "no such thing"
        raise AttributeError(f"compiling ahead, without a device: Triton asked the driver "
                             f"for {name!r}")


def meta_like(value: Any) -> Any:
    """``value`` with every tensor a meta tensor of the same shape, strides, storage offset and
    dtype (lists, tuples and dicts followed), everything else as it is. The offset is kept
    because Triton specializes a pointer on its alignment: a meta tensor's address is its
    offset in bytes, as a view's on the device is its allocation's (aligned) plus that."""
    import torch

    if isinstance(value, torch.Tensor):
        shape, stride = tuple(value.shape), tuple(value.stride())
        span = (1 + sum((size - 1) * step for size, step in zip(shape, stride))
                if all(shape) else 0)
        offset = value.storage_offset()
        base = torch.empty(offset + span, dtype=value.dtype, device="meta")
        return base.as_strided(shape, stride, offset)
    if isinstance(value, (list, tuple)):
        return type(value)(meta_like(item) for item in value)
    if isinstance(value, dict):
        return {key: meta_like(item) for key, item in value.items()}
    return value


@contextmanager
def compiling_only(target: Any, report: CompileAheadReport) -> Iterator[None]:
    """Inside: Triton compiles for ``target`` and launches nothing. Restored after."""
    from triton.runtime import driver
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    run, tuned, compile_one = JITFunction.run, Autotuner.run, JITFunction._do_compile
    # The driver that was active, or None where none was made yet (``reset_active`` would make
    # the default one, which fails where there is no device: here, by design).
    active = getattr(driver, "_active", None)

    def compile_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["warmup"] = True
        return run(self, *args, **kwargs)

    def compile_every_config(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("warmup", None)  # a launch says warmup=False; the warm-up says True itself
        return self.warmup(*args, **kwargs)  # each config compiled; none benchmarked

    driver.set_active(CompileOnlyDriver(target))
    JITFunction.run, Autotuner.run = compile_run, compile_every_config
    time_compiles(JITFunction, report.note_compile)
    try:
        yield
    finally:
        JITFunction.run, Autotuner.run, JITFunction._do_compile = run, tuned, compile_one
        driver._active = active


def compile_calls(entry: Callable[..., Any], input_sets: Sequence[Sequence[Any]],
                  target: Any) -> CompileAheadReport:
    """Call ``entry`` on meta copies of each input set, compiling for ``target`` (a Triton
    ``GPUTarget``) what it launches, into the Triton cache of this process
    (``TRITON_CACHE_DIR``)."""
    report = CompileAheadReport()
    with compiling_only(target, report):
        for inputs in input_sets:
            report.calls += 1
            try:
                entry(*meta_like(list(inputs)))
            except Exception as error:  # the candidate's code: any error stops only this call
                report.stopped.append(f"call {report.calls}: {type(error).__name__}: "
                                      f"{str(error)[:200]}")
    return report
