"""What every backend for a chip that torch exposes as a device module shares.

NVIDIA, AMD (ROCm), Hygon (DCU), Iluvatar (CoreX), MetaX (MACA) and Kunlunxin builds of torch
all answer to ``torch.cuda``; Ascend adds ``torch.npu`` (torch_npu), Cambricon ``torch.mlu``
(torch_mlu), Moore Threads ``torch.musa`` (torch_musa). Past the probe, such a backend differs
only in data: the device module's name, the modules that register it, the cache-flush size
and its timer's label. ``TorchDeviceBackend`` holds the rest once, so a vendor's plugin is its
probe and its facts.

The probe helpers here find things without importing them (``find_spec`` of a top-level
module, a command on PATH, a Triton backend folder or entry point), so a probe can say what is
missing before it pays for importing a vendor runtime.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import shutil
from typing import Any, Callable

from kgb_core.backends import Availability, Backend, ProbeSteps, visible_device
from kgb_core.timing import EventTimer, Timer, TimingSettings


def module_installed(name: str) -> bool:
    """Is the top-level module ``name`` importable? Looks, does not import."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def command_on_path(name: str) -> bool:
    return shutil.which(name) is not None


def triton_backends_installed() -> list[str]:
    """Names of the Triton backends installed, without importing triton.

    Triton finds its backends as folders of ``triton/backends/`` and, since 3.2, through the
    ``triton.backends`` entry-point group (python/triton/backends/__init__.py); vendors' forks
    (Triton-Ascend, FlagTree) install theirs either way.
    """
    names: set[str] = set()
    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = os.path.join(location, "backends")
        if os.path.isdir(root):
            names.update(entry for entry in os.listdir(root)
                         if not entry.startswith("_") and os.path.isdir(os.path.join(root, entry)))
    try:
        from importlib.metadata import entry_points

        names.update(ep.name for ep in entry_points(group="triton.backends"))
    except Exception:  # noqa: BLE001 - a broken metadata entry must not break a probe
        pass
    return sorted(names)


def release_cached_device_memory(module: Any) -> None:
    """Empty the caching allocator of a torch device module (``torch.cuda`` and its vendor
    twins). Tensors kept only by reference cycles are collected first when the allocator still
    holds much, since ``empty_cache`` frees only blocks no tensor uses."""
    if module.memory_allocated() > (256 << 20):
        gc.collect()
    module.empty_cache()


def nan_fill_free_block(nbytes: int, device: str) -> None:
    """Allocate nbytes on device from torch's caching allocator, NaN-fill and free it: the
    block an output of that size is handed next then holds NaNs, not an earlier answer."""
    import torch

    if nbytes <= 0:
        return
    # Exactly nbytes' size class: one element more can round the request past a freed
    # block of that size, which best fit then passes over.
    block = torch.empty((nbytes + 3) // 4, dtype=torch.float32, device=device)
    block.fill_(float("nan"))
    del block


class TorchDeviceBackend(Backend):
    """A backend whose device is a torch device module. Subclasses declare what the chip is
    (``profile = ChipProfile(...)``, whose ``quirks.device_type`` is the torch device string's
    type), set the runtime's attributes below, and write ``probe``."""

    # Attribute of torch that is the device module: "cuda", "npu", "mlu", "musa".
    device_module_name: str = "cuda"
    # Modules setup() imports first, because importing them is what creates the device module
    # (``import torch_npu`` adds ``torch.npu``).
    runtime_modules: tuple[str, ...] = ()
    # Bytes zeroed before every timed call; 0 where no flush size is known for the chip.
    flush_bytes: int = 256 * 1024 * 1024
    # The vendor's variable that chooses visible devices; named in probe messages.
    visible_devices_variable: str | None = None
    # Glob patterns of the device files a sandboxed runner needs bound in (/dev/kfd...).
    device_files: tuple[str, ...] = ()

    @property
    def timer_label(self) -> str:
        flush = "+cache-flush" if self.flush_bytes else "+no-flush"
        return f"{self.name}:{self.device_module_name}-events{flush}"

    def device_module(self) -> Any:
        import torch

        for name in self.runtime_modules:
            importlib.import_module(name)
        return getattr(torch, self.device_module_name)

    def setup(self) -> str:
        module = self.device_module()
        module.set_device(0)
        if self.device_module_name == "cuda":
            # The reference must be at least as accurate as an fp32-accumulating kernel, as on
            # NVIDIA (kgb_backends/nvidia.py says why): ROCm and the CUDA-compatible stacks
            # honour the same torch switches.
            import torch

            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        return f"{self.quirks.device_type}:0"

    def synchronize(self) -> None:
        self.device_module().synchronize()

    def device_count(self) -> int:
        return int(self.device_module().device_count())

    def device_environment(self, index: int) -> dict[str, str] | None:
        """The vendor's visible-devices variable set to the one device; None where it is not
        known (MetaX, Kunlunxin), so kgb refuses several devices there instead of guessing.
        Where two variables are named (AMD: HIP and ROCR), only the first is set: setting
        both to one index would narrow twice (ROCR first picks the device, which HIP then
        sees as device 0)."""
        if not self.visible_devices_variable:
            return None
        variable = self.visible_devices_variable.split("/")[0].strip()
        return {variable: visible_device(index, variable)}

    def ray_resources(self) -> dict[str, Any]:
        """One GPU where the device module is torch.cuda (NVIDIA, AMD and the CUDA-compatible
        stacks); elsewhere a resource named after the device type (``NPU``, ``MLU``). Ray 2.60
        detects Ascend NPUs itself as ``NPU`` and sets ASCEND_RT_VISIBLE_DEVICES for the actor
        (ray/_private/accelerators/npu.py), as it sets HIP_VISIBLE_DEVICES for AMD GPUs; for
        a type Ray does not know, the nodes must declare it (``ray start --resources
        '{"MLU": 1}'``) and Ray pins nothing, so declare one a node: with more, two actors
        would share device 0."""
        if self.device_module_name == "cuda":
            return {"num_gpus": 1}
        return {"resources": {self.quirks.device_type.upper(): 1}}

    def make_timer(self, settings: TimingSettings) -> Timer:
        return EventTimer(settings, self.device_module(), f"{self.quirks.device_type}:0",
                          self.flush_bytes, label=self.timer_label)

    def current_stream(self) -> object | None:
        """A comparable handle of the current stream: the raw pointer where torch offers one
        (``cuda_stream``, and by the same pattern ``npu_stream``...), else torch's stream id."""
        stream = self.device_module().current_stream()
        for attribute in (f"{self.device_module_name}_stream", "stream_id"):
            handle = getattr(stream, attribute, None)
            if handle is not None:
                return handle
        return stream

    def device_name(self) -> str:
        module = self.device_module()
        getter = getattr(module, "get_device_name", None)
        return f"{self.name}: {getter(0)}" if getter else self.name

    def sandbox_device_files(self) -> tuple[str, ...]:
        return self.device_files

    def worker_host_memory_limit(self) -> int | None:
        return int(float(os.environ.get("KGB_WORKER_HOST_MEMORY_GB", "32")) * (1 << 30))

    def _untouched(self) -> bool:
        """Whether this process never touched the device: it holds nothing, and asking the
        allocator would start a device context for nothing."""
        initialized = getattr(self.device_module(), "is_initialized", None)
        return initialized is not None and not initialized()

    def release_cached_memory(self) -> None:
        if not self._untouched():
            release_cached_device_memory(self.device_module())

    def device_memory_peak(self, reset: bool = False) -> int | None:
        if self._untouched():
            return 0
        module = self.device_module()
        peak = getattr(module, "max_memory_reserved", None)
        if peak is None:
            return None
        held = int(peak())
        if reset:
            reset_peak = getattr(module, "reset_peak_memory_stats", None)
            if reset_peak is not None:
                reset_peak()
        return held

    def device_memory_total(self) -> int | None:
        properties = getattr(self.device_module(), "get_device_properties", None)
        total = getattr(properties(0), "total_memory", None) if properties else None
        return int(total) if total else None

    def poison_free_memory(self, nbytes: int) -> None:
        """NaN-fill a block the device's caching allocator will reuse, so an unwritten output
        shows (every vendor's torch build keeps torch's caching allocator design)."""
        nan_fill_free_block(nbytes, f"{self.quirks.device_type}:0")

    # Probe building blocks, shared so every vendor's message reads the same way.
    def probe_extension(self, *, runtime: str, needs: str, chip: str, tool: str,
                        triton_backend: str | None = None, triton_name: str = "",
                        import_hint: str = "", installed: Callable[[str], bool] = module_installed,
                        on_path: Callable[[str], bool] = command_on_path,
                        triton_backends: Callable[[], list[str]] = triton_backends_installed
                        ) -> Availability:
        """The probe of a chip whose torch build is an extension module (``torch_npu``,
        ``torch_mlu``, ``torch_musa``) that adds ``torch.<device_module_name>``: the vendor's
        tool on PATH, the module installed and importable, a device seen, and the vendor's
        Triton backend where the chip needs one (``triton_backend``, installed as
        ``triton_name``), each a step ``kgb doctor`` prints. ``needs`` says what is missing in
        words ("an Ascend device"), ``chip`` names one device ("Ascend NPU"). The look-ups are
        parameters so that a plugin's tests can stand in for a vendor stack this machine lacks."""
        import importlib

        steps, tool_found = ProbeSteps(), on_path(tool)
        steps.step(f"{tool} on PATH", tool_found, "found" if tool_found else "not found")
        if not installed(runtime):
            steps.step(f"{runtime} installed", False, "not installed")
            where = f"{tool} found" if tool_found else f"no {tool} on PATH"
            return steps.unavailable(f"not available: needs {runtime} and {needs} "
                                     f"({runtime} is not installed; {where})")
        try:
            import torch

            importlib.import_module(runtime)
        except Exception as error:  # noqa: BLE001 - a broken vendor install raises anything
            failure = f"{type(error).__name__}: {error}"
            steps.step(f"import {runtime}", False, failure)
            hint = f" ({import_hint})" if import_hint else ""
            return steps.unavailable(f"{runtime} failed to import{hint}: {failure}")
        steps.step(f"import {runtime}", True, f"torch {torch.__version__}")
        unseen = self.devices_seen(steps, f"{runtime} (torch {torch.__version__})")
        if unseen is not None:
            return unseen
        if triton_backend is not None:
            names = triton_backends()
            if not steps.step(f"Triton backend '{triton_backend}'", triton_backend in names,
                              ", ".join(names) or "none"):
                return steps.unavailable(
                    f"{runtime} sees {self.device_module().device_count()} "
                    f"{chip.split()[-1]}(s) but Triton has no '{triton_backend}' backend "
                    f"(backends {names}): install {triton_name}")
        return self.device_named(steps, lambda count, name: f"{count} {chip}(s): {name}")

    def devices_seen(self, steps: ProbeSteps, where: str) -> Availability | None:
        """A probe's step ``torch.<device>.is_available()``: None when devices are seen, else
        the probe's end, naming ``where`` and the variable that may hide them."""
        module = self.device_module()
        seen = module.is_available()
        if steps.step(f"torch.{self.device_module_name}.is_available()", seen,
                      f"{module.device_count()} device(s)" if seen else "False"):
            return None
        return steps.unavailable(self._no_device(where))

    def device_named(self, steps: ProbeSteps,
                     describe: Callable[[int, str], str]) -> Availability:
        """A probe's last step, the first device's name; ``describe(count, name)`` is the
        available backend's line."""
        module = self.device_module()
        name = module.get_device_name(0)
        steps.step(f"torch.{self.device_module_name}.get_device_name(0)", True, name)
        return steps.available(describe(module.device_count(), name))

    def _no_device(self, what: str) -> str:
        hint = (f" (or {self.visible_devices_variable} hides them)"
                if self.visible_devices_variable else "")
        return f"{what} sees no device{hint}"
