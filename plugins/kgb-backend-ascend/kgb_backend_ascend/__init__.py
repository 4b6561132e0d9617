"""The Ascend backend: Huawei Ascend NPUs through torch_npu and Triton-Ascend.

``import torch_npu`` adds ``torch.npu`` (device "npu", ``torch.npu.Event`` and streams); the
kernels compile with Triton-Ascend, whose driver hands ``torch.npu`` to ``do_bench`` as the
device interface and flushes a 192 MB buffer between timed runs.

Sources (commits in README.md):
- triton-lang/triton-ascend third_party/ascend/backend/driver.py (``get_active_torch_device``:
  torch.device("npu", ...); ``get_empty_cache_for_benchmark``: 192 MB) and
  backend_register.py (device interface ``torch.npu``).
- triton-lang/triton-ascend docs/sources/python-api/outline.md (per-op dtype support: no fp64
  column; ``sort`` unsupported for every dtype; ``dot_scaled`` and ``inline_asm_elementwise``
  unsupported; ``dot`` not on int16/int32/int64; ``trans``/``permute`` only of adjacent axes;
  ``gather`` only on the last axis; all tensors of a kernel together at most 96 KB, 192 KB
  without double buffering).
- triton-lang/triton-ascend docs/en/migration_guide/migrate_from_gpu.md and
  architecture_difference.md (grid = physical cores, coreDim <= 65535 without auto-blockify,
  192 KB on-chip memory on Atlas A2, 32-byte alignment for vector operators).
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_ascend/__init__.py (device "npu", query
  command ``npu-smi info``, dispatch key PrivateUse1; CUSTOMIZED_UNUSED_OPS contiguous, sort,
  sort_stable, topk) and device.py (Ascend is in UNSUPPORT_FP64).
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, Quirks, TimingSettings,
                          TorchDeviceBackend, command_on_path, module_installed,
                          triton_backends_installed)

_OUTLINE = "triton-lang/triton-ascend docs/sources/python-api/outline.md"
_NO_FP64 = (f"Triton-Ascend supports no float64 operations ({_OUTLINE} has no fp64 column; its "
            "tl.dot page calls fp64 a hardware limit) and FlagGems lists Ascend in UNSUPPORT_FP64")


class AscendBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="ascend",
        description=("Huawei Ascend NPUs through torch_npu and Triton-Ascend (NPU events, 192 MB "
                     "flush)"),
        quirks=Quirks(
            device_type="npu",
            skipped_dtypes={"float64": _NO_FP64},
            # No block-size limit in elements and no num_warps semantics are documented; the
            # binding limits are on-chip memory and the grid size, given in the hints.
            unsupported_tl=(
                "tl.sort",
                "tl.dot_scaled",
                "tl.inline_asm_elementwise",
                "tl.dot on int16/int32/int64 operands",
                "tl.trans/tl.permute of non-adjacent axes",
                "tl.gather except along the last axis",
            ),
            prompt_hints=(
                "This is a Huawei Ascend NPU (Triton-Ascend): tensors live on device 'npu' "
                "(import torch_npu). The grid maps onto physical AI cores: prefer a 1-D grid of "
                "about the core count and loop over tiles inside each program; a grid above "
                "65535 programs fails to launch unless the compiler folds it (coreDim limit).",
                "On-chip memory (UB) is small: all tensors live in one kernel together must stay "
                "within about 96 KB (192 KB without double buffering), so split large blocks "
                "into sub-blocks in an inner loop (BLOCK_SIZE_SUB) rather than one huge tl.arange.",
                "Vector loads and stores want 32-byte-aligned addresses; float64 is unsupported.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={
                "aten.sort": (f"tl.sort is unsupported on Ascend for every dtype ({_OUTLINE}); "
                              "FlagGems disables its Triton sort there too (CUSTOMIZED_UNUSED_OPS "
                              "in FlagOpen/FlagGems src/flag_gems/runtime/backend/_ascend/__init__.py)"),
            },
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "npu"
    runtime_modules = ("torch_npu",)
    flush_bytes = 192 * 1024 * 1024  # Triton-Ascend's driver, get_empty_cache_for_benchmark
    visible_devices_variable = "ASCEND_RT_VISIBLE_DEVICES"  # CANN runtime's variable
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc")

    def probe(self) -> Availability:
        # The look-ups are this module's names, read at each call: the plugin's tests
        # stand in for the vendor's stack through them.
        return self.probe_extension(
            runtime="torch_npu", needs="an Ascend device", chip="Ascend NPU", tool="npu-smi",
            triton_backend="ascend", triton_name="Triton-Ascend",
            import_hint="is CANN's set_env.sh sourced?", installed=module_installed,
            on_path=command_on_path, triton_backends=triton_backends_installed)


@hookimpl
def kgb_register_backends(register):
    register(AscendBackend())
