"""The Iluvatar backend: Iluvatar CoreX GPUs through CoreX's torch build (device "cuda").

CoreX's torch keeps the CUDA API (device "cuda", ``torch.cuda``) and adds ``torch.corex``,
which is how FlagGems tells it from NVIDIA's (``DeviceDetector._get_vendor_from_quick_cmd``
checks ``hasattr(torch, "corex")``). The probe asks the same thing.

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_iluvatar/__init__.py (device "cuda", query
  command ``ixsmi``, no CUSTOMIZED_UNUSED_OPS) and src/flag_gems/runtime/backend/device.py
  (``torch.corex``; Iluvatar is in UNSUPPORT_FP64).
- flagos-ai/FlagTree third_party/iluvatar/backend/driver.py: target "cuda" with
  ``warp_size = 64``; ``is_active``: torch.cuda.is_available() and torch.version.hip is None.
  third_party/iluvatar/backend/compiler.py: num_warps must be a power of 2 (no upper bound
  stated), default install path /usr/local/corex.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, ProbeSteps, Quirks,
                          TimingSettings, TorchDeviceBackend, command_on_path)

_NO_FP64 = ("FlagGems lists Iluvatar among chips without float64 support (UNSUPPORT_FP64 in "
            "FlagOpen/FlagGems src/flag_gems/runtime/backend/device.py) and drops float64 from "
            "its tests there")


class IluvatarBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="iluvatar",
        description="Iluvatar CoreX GPUs through CoreX's torch build (CUDA-API events)",
        quirks=Quirks(
            device_type="cuda",
            skipped_dtypes={"float64": _NO_FP64},
            # No documented upper bound on num_warps (FlagTree only requires a power of 2).
            max_num_warps=None,
            prompt_hints=(
                "This is an Iluvatar CoreX GPU: tensors live on device 'cuda', but a warp has 64 "
                "threads (FlagTree's iluvatar driver), so do not hard-code 32-lane warp logic.",
                "float64 is not supported on this chip: compute in float32.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={},  # none known: FlagGems skips no operator on Iluvatar for failing
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "cuda"
    # Unknown: FlagTree's iluvatar backend defines no benchmark flush buffer of its own; 256 MB
    # (Triton's CUDA default) is at least as large as any cache on the chip's public specs.
    flush_bytes = 256 * 1024 * 1024
    visible_devices_variable = "CUDA_VISIBLE_DEVICES"  # CUDA-compatible stack (assumed)
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/iluvatar*",)

    def probe(self) -> Availability:
        steps = ProbeSteps()
        try:
            import torch
        except ImportError as error:
            steps.step("import torch", False, str(error))
            return steps.unavailable(f"needs CoreX's torch build: {error}")
        steps.step("import torch", True, torch.__version__)
        if not steps.step("torch.corex (CoreX's build)", hasattr(torch, "corex"),
                          "present" if hasattr(torch, "corex") else "absent"):
            found = "ixsmi found" if command_on_path("ixsmi") else "no ixsmi on PATH"
            return steps.unavailable(f"torch {torch.__version__} has no torch.corex, so it "
                                     f"is not CoreX's build ({found}); needs Iluvatar CoreX's "
                                     f"torch and an Iluvatar GPU")
        return (self.devices_seen(steps, f"CoreX torch {torch.__version__}")
                or self.device_named(steps, lambda count, name:
                                     f"CoreX: {count} device(s): {name}"))


@hookimpl
def kgb_register_backends(register):
    register(IluvatarBackend())
