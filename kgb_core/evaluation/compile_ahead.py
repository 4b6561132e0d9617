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

The meta tensors say they are on the GPU (``on_the_device``): published kernels pick their
block sizes by device (vLLM's style: ``4096 if x.is_cuda else 1024``), and on an H100 two
reference kernels written so compiled ahead for a plain meta tensor's branch and missed the
cache for every call (``results/h100-compile-ahead-6b2b545.txt``: ``vllm.rms_norm`` and
``vllm.cutlass_scaled_mm`` wrote 50 and 114 cache files on the GPU; the kernels that do not
branch on the device wrote only Triton's launcher). Factories asked for the device
(``torch.empty(n, device=x.device)``) make meta tensors that say the same.

What the candidate can do there: run its own code on shapes it would be handed anyway, and
write into a cache only its own runner reads. The judge never reads it. Code that needs values
(``.item()``, a data-dependent branch) fails on meta tensors; the calls before it have
compiled, and the rest compile in the runner as before.

Where it stands: this module (tested on a machine without a GPU, compiling for an H100's
target) is the first piece. The judge does not run it yet: that needs a sandbox without the
GPU's device nodes, and a GPU run to show that the runner's compiles hit what it wrote for
kernels that branch on the device too (the H100 run above predates ``on_the_device``).
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


def _device_looking_meta() -> tuple[type, type]:
    """The tensor class whose meta tensors say they are on the GPU, and the mode that keeps
    them so through torch's functions (made once, on first use: torch is imported late)."""
    global _MADE
    if _MADE is not None:
        return _MADE
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_map

    gpu = torch.device("cuda", 0)

    class OnTheDevice(torch.Tensor):
        """A meta tensor that answers ``device``, ``is_cuda`` and ``is_meta`` as a tensor on
        the GPU would: the candidate's host code takes its GPU branch."""

        @property
        def device(self) -> Any:
            return gpu

        @property
        def is_cuda(self) -> bool:
            return True

        @property
        def is_meta(self) -> bool:
            return False

    def to_meta(value: Any) -> Any:
        if isinstance(value, OnTheDevice):
            with torch._C.DisableTorchFunctionSubclass():
                return value.as_subclass(torch.Tensor)  # plain meta, same storage and view
        if isinstance(value, torch.device) and value.type == "cuda":
            return torch.device("meta")
        if isinstance(value, str) and value.split(":")[0] == "cuda":
            return "meta"
        return value

    class KeptOnTheDevice(TorchFunctionMode):
        """Every torch function runs on plain meta tensors, a device it is asked for that is
        the GPU made meta (factories, ``.to``), and the tensors it returns say the GPU again.
        Torch's own code then never reads the device an ``OnTheDevice`` claims."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            if func is torch.Tensor.cuda:
                args = args[:1]  # a meta tensor moved to the GPU stays where it is
                func = torch.Tensor.clone
            out = func(*tree_map(to_meta, args), **tree_map(to_meta, kwargs or {}))
            return tree_map(lambda value: value.as_subclass(OnTheDevice)
                            if type(value) is torch.Tensor and value.device.type == "meta"
                            else value, out)

    _MADE = (OnTheDevice, KeptOnTheDevice)
    return _MADE


_MADE: tuple[type, type] | None = None


def on_the_device(value: Any) -> Any:
    """``meta_like(value)`` with every tensor an ``OnTheDevice``: inside ``compiling_only`` the
    candidate sees tensors on the GPU, and none has memory."""
    on_device = _device_looking_meta()[0]
    return _tensors_mapped(value, lambda tensor: _meta_copy(tensor).as_subclass(on_device))


def meta_like(value: Any) -> Any:
    """``value`` with every tensor a meta tensor of the same shape, strides, storage offset and
    dtype (lists, tuples and dicts followed), everything else as it is. The offset is kept
    because Triton specializes a pointer on its alignment: a meta tensor's address is its
    offset in bytes, as a view's on the device is its allocation's (aligned) plus that."""
    return _tensors_mapped(value, _meta_copy)


def _meta_copy(tensor: Any) -> Any:
    import torch

    shape, stride = tuple(tensor.shape), tuple(tensor.stride())
    span = (1 + sum((size - 1) * step for size, step in zip(shape, stride))
            if all(shape) else 0)
    offset = tensor.storage_offset()
    base = torch.empty(offset + span, dtype=tensor.dtype, device="meta")
    return base.as_strided(shape, stride, offset)


def _tensors_mapped(value: Any, change: Callable[[Any], Any]) -> Any:
    """``value`` with ``change`` applied to every tensor, lists, tuples and dicts followed."""
    import torch

    if isinstance(value, torch.Tensor):
        return change(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_tensors_mapped(item, change) for item in value)
    if isinstance(value, dict):
        return {key: _tensors_mapped(item, change) for key, item in value.items()}
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
    """Call ``entry`` on meta copies of each input set that say they are on the GPU
    (``on_the_device``), compiling for ``target`` (a Triton ``GPUTarget``) what it launches,
    into the Triton cache of this process (``TRITON_CACHE_DIR``)."""
    report = CompileAheadReport()
    kept_on_the_device = _device_looking_meta()[1]
    with compiling_only(target, report):
        for inputs in input_sets:
            report.calls += 1
            try:
                arguments = on_the_device(list(inputs))
                with kept_on_the_device():
                    entry(*arguments)
            except Exception as error:  # the candidate's code: any error stops only this call
                report.stopped.append(f"call {report.calls}: {type(error).__name__}: "
                                      f"{str(error)[:200]}")
    return report
