"""The AMD backend: AMD GPUs through ROCm (HIP) builds of torch and Triton.

A ROCm build of torch answers to ``torch.cuda`` and names its device "cuda"; what tells it from
a CUDA build is ``torch.version.hip`` (a version string, None on CUDA and CPU builds). Triton's
own AMD driver decides it is active the same way: ``torch.cuda.is_available() and
torch.version.hip is not None`` (triton-lang/triton, third_party/amd/backend/driver.py,
``HIPDriver.is_active``).

Sources (read at the commits named in README.md):
- triton-lang/triton third_party/amd/backend/driver.py: device "cuda", device interface
  ``torch.cuda``, a 256 MB cache-flush buffer for benchmarks ("the same as the Nvidia backend").
- triton-lang/triton third_party/amd/backend/compiler.py: ``warp_size = 32 if gfx_major >= 10
  else 64`` and ``amdgpu-flat-work-group-size 1,num_warps*warp_size``.
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_amd/__init__.py: device "cuda", query
  command ``rocm-smi``.
"""

from __future__ import annotations

import os

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, ProbeSteps, Quirks,
                          TimingSettings, TorchDeviceBackend, command_on_path)

# Hygon's DCUs run a ROCm-derived stack (DTK) whose torch also sets torch.version.hip; its
# query command is hy-smi (FlagGems _hygon/__init__.py) and DTK lives in /opt/dtk (FlagTree
# third_party/hcu/backend/compiler.py). Either one means "this is a Hygon DCU, not AMD".
HYGON_MARKERS = ("hy-smi", "/opt/dtk")


def looks_like_hygon() -> bool:
    return command_on_path(HYGON_MARKERS[0]) or os.path.isdir(HYGON_MARKERS[1])


class AmdBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="amd",
        description=("AMD GPUs through ROCm/HIP builds of torch and Triton (HIP events, 256 MB "
                     "flush)"),
        quirks=Quirks(
            device_type="cuda",
            # Triton's AMD compiler uses 64-lane wavefronts on gfx9 (CDNA: MI100, MI200, MI300)
            # and 32 on gfx10+ (RDNA); a work-group holds at most 1024 work-items (HIP's
            # maxThreadsPerBlock), so num_warps <= 1024 / 64 = 16 on the Instinct parts.
            max_num_warps=16,
            prompt_hints=(
                "This is an AMD GPU under ROCm: tensors live on device 'cuda' (HIP keeps torch's "
                "CUDA API), and a Triton 'warp' is a 64-lane wavefront on Instinct (CDNA) parts, "
                "so num_warps=4 already means 256 threads; use at most num_warps=16.",
                "Pass allow_tf32=False (or input_precision='ieee') to tl.dot for float32 inputs: "
                "the reference computes float32 matmuls in full precision.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            # No operator is known not to run on AMD. FlagGems leaves its own Triton kernels for
            # cumsum, cos and add unregistered there (CUSTOMIZED_UNUSED_OPS in _amd/__init__.py)
            # without saying why; that is not evidence that they fail, so nothing is denied.
            denied_operators={},
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "cuda"  # HIP builds of torch keep the torch.cuda API and "cuda" device
    flush_bytes = 256 * 1024 * 1024  # Triton's AMD driver, get_empty_cache_for_benchmark
    # ROCm honours HIP_VISIBLE_DEVICES (and CUDA_VISIBLE_DEVICES); Triton's proton README
    # recommends ROCR_VISIBLE_DEVICES on AMD (triton-lang/triton third_party/proton/README.md).
    visible_devices_variable = "HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES"
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/kfd", "/dev/dri/*")

    def probe(self) -> Availability:
        steps = ProbeSteps()
        try:
            import torch
        except ImportError as error:
            steps.step("import torch", False, str(error))
            return steps.unavailable(f"needs a ROCm build of torch: {error}")
        steps.step("import torch", True, torch.__version__)
        hip = getattr(torch.version, "hip", None)
        if not steps.step("torch.version.hip (a ROCm build)", hip is not None, str(hip)):
            return steps.unavailable(f"torch.version.hip is None: this is not a ROCm build "
                                     f"(torch {torch.__version__}); needs a ROCm build of "
                                     f"torch and Triton, and an AMD GPU")
        hygon = looks_like_hygon()
        if not steps.step("not a Hygon DCU", not hygon,
                          " or ".join(HYGON_MARKERS) + (" found" if hygon else " absent")):
            return steps.unavailable(f"ROCm-style torch (hip {hip}) on a Hygon DCU "
                                     f"({' or '.join(HYGON_MARKERS)} found): use the "
                                     f"'hygon' backend (kgb-backend-hygon)")
        return (self.devices_seen(steps, f"ROCm build of torch {torch.__version__} (hip {hip})")
                or self.device_named(steps, lambda count, name: f"ROCm (hip {hip}): "
                                     f"{count} device(s): {name} ({_arch(torch)})"))


def _arch(torch) -> str:
    """The first device's architecture (gfx...), as HIP builds of torch report it."""
    return getattr(torch.cuda.get_device_properties(0), "gcnArchName", "unknown arch")


@hookimpl
def kgb_register_backends(register):
    register(AmdBackend())
