"""The Cambricon backend: Cambricon MLUs through torch_mlu and Cambricon's Triton.

``import torch_mlu`` adds ``torch.mlu`` (device "mlu", ``torch.mlu.Event``); Cambricon's Triton
backend is "mlu" (FlagGems imports ``triton.backends.mlu.driver``).

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_cambricon/__init__.py (device "mlu", query
  command ``cnmon``, dispatch key PrivateUse1; CUSTOMIZED_UNUSED_OPS randperm, sort,
  multinomial, _upsample_bicubic2d_aa, sort_stable, commented "skip now"), _cambricon/utils/
  __init__.py (cluster_num x core_num_per_cluster cores, max_nram_size, per-axis grid limits
  from ``triton.backends.mlu.driver.BangUtils().get_device_properties``), device.py (Cambricon
  is in UNSUPPORT_FP64).
- flagos-ai/FlagTree third_party/cambricon/backend/driver.py (device interface ``torch.mlu``;
  ``is_active`` via torch.mlu / torch_mlu; 256 MB cache flush for benchmarks; grids launched as
  union tasks over clusters), third_party/cambricon/backend/compiler.py (num_warps defaults to
  1; values above 4 fall back to 4, 2 falls back to 1; num_stages defaults to 0),
  third_party/cambricon/python/triton/testing.py (torch.mlu events).
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, Quirks, TimingSettings,
                          TorchDeviceBackend, command_on_path, module_installed,
                          triton_backends_installed)

_NO_FP64 = ("FlagGems lists Cambricon among chips without float64 support (UNSUPPORT_FP64 in "
            "FlagOpen/FlagGems src/flag_gems/runtime/backend/device.py)")


class CambriconBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="cambricon",
        description=("Cambricon MLUs through torch_mlu and Cambricon's Triton (MLU events, 256 MB "
                     "flush)"),
        quirks=Quirks(
            device_type="mlu",
            skipped_dtypes={"float64": _NO_FP64},
            max_num_warps=4,  # FlagTree's cambricon compiler: above 4 falls back to 4
            prompt_hints=(
                "This is a Cambricon MLU: tensors live on device 'mlu' (import torch_mlu). "
                "num_warps means MLU cores per task: use 1 (one core) or 4 (a cluster); 2 falls "
                "back to 1 and anything above 4 to 4.",
                "The chip has few, wide cores: launch about as many programs as cores "
                "(FlagGems uses grid = min(cdiv(n, BLOCK), cluster_num * core_num_per_cluster)) "
                "and loop over tiles inside each program; keep each program's working set "
                "within on-chip NRAM.",
                "float64 is not supported on this chip: compute in float32.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={
                "aten.sort": ("FlagGems disables its Triton sort on Cambricon, marked 'skip now' "
                              "(CUSTOMIZED_UNUSED_OPS in FlagOpen/FlagGems "
                              "src/flag_gems/runtime/backend/_cambricon/__init__.py); not known to "
                              "run there"),
            },
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "mlu"
    runtime_modules = ("torch_mlu",)
    flush_bytes = 256 * 1024 * 1024  # FlagTree third_party/cambricon/backend/driver.py
    visible_devices_variable = "MLU_VISIBLE_DEVICES"  # Cambricon's runtime variable
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/cambricon*",)

    def probe(self) -> Availability:
        # The look-ups are this module's names, read at each call: the plugin's tests
        # stand in for the vendor's stack through them.
        return self.probe_extension(
            runtime="torch_mlu", needs="a Cambricon MLU", chip="Cambricon MLU", tool="cnmon",
            triton_backend="mlu", triton_name="Cambricon's Triton", installed=module_installed,
            on_path=command_on_path, triton_backends=triton_backends_installed)


@hookimpl
def kgb_register_backends(register):
    register(CambriconBackend())
