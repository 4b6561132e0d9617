"""The Kunlunxin backend: Kunlunxin XPUs through Kunlunxin's torch build (device "cuda").

The brief asked whether the device is "xpu": in the public multi-vendor projects it is not.
FlagGems' Kunlunxin entry names the torch device "cuda" (with Triton extras under the name
"xpu"), and FlagTree's xpu ``testing.py`` times with ``torch.cuda.Event`` on ``device='cuda'``:
Kunlunxin's torch build answers to the CUDA API. Kunlunxin's own Triton backend is "xpu"
(FlagTree third_party/xpu), which is what the probe looks for, with the ``xpu-smi`` command.

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_kunlunxin/__init__.py: device "cuda", query
  command ``xpu-smi``, ``triton_extra_name="xpu"``; Kunlunxin is in UNSUPPORT_FP64
  (src/flag_gems/runtime/backend/device.py); _kunlunxin/utils/block_size_utils.py (12 clusters
  x 64 cores, per-core buffer); _kunlunxin/ops/mv.py (XMLIR_MATMUL_FAST_MODE: the XMLIR runtime).
- flagos-ai/FlagTree third_party/xpu/backend/compiler.py: ``TRITON_XPU_ARCH`` in {2,3,4,5}
  (default 3), cluster_num 12 on arch 3 else 8, core_num 64, ``num_warps`` is not used ("we
  don't have warp", driver.py warp_size = 1); third_party/xpu/python/triton/testing.py (256e6
  bytes flush, torch.cuda events).
- FlagGems tests/ skip markers for ``vendor_name == "kunlunxin"`` (the deny-list).
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, ProbeSteps, Quirks,
                          TimingSettings, TorchDeviceBackend, command_on_path,
                          triton_backends_installed)

_NO_FP64 = ("FlagGems lists Kunlunxin among chips without float64 support (UNSUPPORT_FP64 in "
            "FlagOpen/FlagGems src/flag_gems/runtime/backend/device.py)")


def _skipped(test_file: str) -> str:
    return ("FlagGems skips its Triton kernel for this operator on Kunlunxin with reason "
            f"'RESULT TODOFIX' (wrong results; FlagOpen/FlagGems tests/{test_file}); "
            "not known to run correctly there")


class KunlunxinBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="kunlunxin",
        description=("Kunlunxin XPUs through Kunlunxin's torch build (CUDA-API events, 256 MB "
                     "flush)"),
        quirks=Quirks(
            device_type="cuda",
            skipped_dtypes={"float64": _NO_FP64},
            max_num_warps=None,  # num_warps is ignored by the xpu compiler: there are no warps
            unsupported_tl=("num_warps / num_stages launch options (ignored by the xpu compiler)",),
            prompt_hints=(
                "This is a Kunlunxin XPU: tensors live on device 'cuda', but there are no warps "
                "(num_warps is ignored). Programs run on clusters (12 clusters of 64 cores on XPU3, "
                "per FlagTree's xpu compiler), so grids of a few programs per cluster with large "
                "blocks work better than GPU-style grids of thousands of small programs.",
                "float64 is not supported on this chip: compute in float32.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={
                "aten.sort": _skipped("test_special_ops.py (test_sort)"),
                "aten.conv1d": _skipped("test_convolution_ops.py (test_accuracy_conv1d)"),
                "aten.conv2d": _skipped("test_convolution_ops.py (test_accuracy_conv2d)"),
                "aten.scaled_dot_product_attention": _skipped("test_attention_ops.py (test_sdpa_*)"),
            },
        ),
        # FlagGems shortens warm-up on Kunlunxin because big shapes time out (benchmark/conftest.py).
        default_timing=TimingSettings(warmup_ms=10.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "cuda"
    flush_bytes = 256_000_000  # FlagTree third_party/xpu/python/triton/testing.py: 256e6 bytes
    visible_devices_variable = None  # unknown for Kunlunxin's torch build
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/xpu*",)

    def probe(self) -> Availability:
        steps = ProbeSteps()
        backends = triton_backends_installed()
        has_xpu_triton = "xpu" in backends
        has_smi = command_on_path("xpu-smi")
        steps.step("xpu-smi on PATH", has_smi, "found" if has_smi else "not found")
        steps.step("Triton backend 'xpu'", has_xpu_triton, ", ".join(backends) or "none")
        if not (has_xpu_triton or has_smi):
            return steps.unavailable(f"no Kunlunxin stack found (no xpu-smi on PATH; Triton "
                                     f"backends {backends}, no 'xpu'); needs a Kunlunxin XPU "
                                     f"with its torch build and Triton for XPU")
        if not has_xpu_triton:
            return steps.unavailable(f"xpu-smi found but Triton has no 'xpu' backend "
                                     f"(backends {backends}): install Kunlunxin's Triton")
        try:
            import torch
        except ImportError as error:
            steps.step("import torch", False, str(error))
            return steps.unavailable(f"needs Kunlunxin's torch build: {error}")
        steps.step("import torch", True, torch.__version__)
        return (self.devices_seen(steps, f"torch {torch.__version__}")
                or self.device_named(steps, lambda count, name:
                                     f"Kunlunxin XPU: {count} device(s): {name}"))


@hookimpl
def kgb_register_backends(register):
    register(KunlunxinBackend())
