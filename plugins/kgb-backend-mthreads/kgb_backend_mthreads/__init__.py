"""The Moore Threads backend: MTT GPUs through torch_musa and MUSA's Triton.

``import torch_musa`` adds ``torch.musa`` (device "musa", ``torch.musa.Event``). FlagTree's
mthreads driver is active exactly when ``torch_musa`` imports and ``torch.musa.is_available()``;
the probe asks the same.

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_mthreads/__init__.py (device "musa", query
  command ``mthreads-gmi``, no CUSTOMIZED_UNUSED_OPS), device.py (Moore Threads is in
  UNSUPPORT_FP64), benchmark/performance_utils.py (``triton.musa_testing.do_bench`` on musa).
- flagos-ai/FlagTree third_party/mthreads/backend/driver.py (``is_active``; target "musa";
  ``warp_size = 128``, or 32 when the device's capability major is above 2),
  third_party/mthreads/backend/compiler.py (num_warps a power of 2, no upper bound stated),
  third_party/mthreads/backend/musa_testing.py (256e6-byte flush, torch.musa events).
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, Quirks, TimingSettings,
                          TorchDeviceBackend, command_on_path, module_installed)

_NO_FP64 = ("FlagGems lists Moore Threads among chips without float64 support (UNSUPPORT_FP64 "
            "in FlagOpen/FlagGems src/flag_gems/runtime/backend/device.py)")


class MthreadsBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="mthreads",
        description=("Moore Threads GPUs through torch_musa and MUSA's Triton (MUSA events, 256 MB"
                     " flush)"),
        quirks=Quirks(
            device_type="musa",
            skipped_dtypes={"float64": _NO_FP64},
            max_num_warps=None,  # no upper bound documented
            prompt_hints=(
                "This is a Moore Threads GPU (MUSA): tensors live on device 'musa' (import "
                "torch_musa). The warp width depends on the generation: 128 threads up to "
                "compute capability 2.x, 32 after (FlagTree's mthreads driver), so do not "
                "hard-code 32-lane warp logic.",
                "float64 is not supported on this chip: compute in float32.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={},  # none known among kgb's operators
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "musa"
    runtime_modules = ("torch_musa",)
    flush_bytes = 256_000_000  # FlagTree third_party/mthreads/backend/musa_testing.py
    visible_devices_variable = "MUSA_VISIBLE_DEVICES"  # MUSA runtime's variable
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/mtgpu*", "/dev/dri/*")

    def probe(self) -> Availability:
        # The look-ups are this module's names, read at each call: the plugin's tests
        # stand in for the vendor's stack through them.
        return self.probe_extension(
            runtime="torch_musa", needs="a Moore Threads GPU", chip="Moore Threads GPU",
            tool="mthreads-gmi", installed=module_installed, on_path=command_on_path)


@hookimpl
def kgb_register_backends(register):
    register(MthreadsBackend())
