"""The Hygon backend: Hygon DCUs through DTK, Hygon's ROCm-derived stack (HIP, device "cuda").

DTK's torch is a HIP build: ``torch.version.hip`` is set and the device is "cuda", exactly as on
AMD, so the probe needs a Hygon-specific sign as well: the ``hy-smi`` query command (FlagGems'
``device_query_cmd``) or DTK's install folder ``/opt/dtk`` (where FlagTree's hcu compiler
looks for ``ld.lld``).

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_hygon/__init__.py: device "cuda", query
  command ``hy-smi``, Triton extra-library name "hip"; CUSTOMIZED_UNUSED_OPS is empty.
- flagos-ai/FlagTree third_party/hcu/backend/driver.py (``is_active``: torch.version.hip is not
  None; target "hip" with the device's warpSize), third_party/hcu/backend/compiler.py
  (``warp_size = 32 if 'gfx10'/'gfx11' in arch else 64``; flat work-group size
  num_warps*warp_size), third_party/hcu/python/triton/testing.py (256 MB cache flush, torch.cuda
  events).
- FlagGems tests/ and benchmark/ skip markers for ``vendor_name == "hygon"`` (the deny-list).
"""

from __future__ import annotations

import os

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, ProbeSteps, Quirks,
                          TimingSettings, TorchDeviceBackend, command_on_path)

_FLAGGEMS_TESTS = "FlagOpen/FlagGems tests/"


def _skipped(test_file: str, why: str) -> str:
    return (f"FlagGems skips its Triton kernel for this operator on Hygon with reason {why!r} "
            f"({_FLAGGEMS_TESTS}{test_file}); not known to run there")


def hygon_signs() -> list[str]:
    signs = []
    if command_on_path("hy-smi"):
        signs.append("hy-smi on PATH")
    if os.path.isdir("/opt/dtk"):
        signs.append("/opt/dtk")
    return signs


class HygonBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="hygon",
        description=("Hygon DCUs through DTK (ROCm-based) torch and Triton (HIP events, 256 MB "
                     "flush)"),
        quirks=Quirks(
            device_type="cuda",
            # FlagTree's hcu compiler gives 64-lane wavefronts to every arch but gfx10/gfx11 (the
            # DCUs are gfx9-family: gfx906/926/928/936); with HIP's 1024 work-items per work-group
            # that is at most 16 warps. The 1024 bound is HIP's, not confirmed on a DCU here.
            max_num_warps=16,
            prompt_hints=(
                "This is a Hygon DCU (DTK, HIP-based): tensors live on device 'cuda', and a Triton "
                "'warp' is a 64-lane wavefront, so num_warps=4 already means 256 threads; use at "
                "most num_warps=16 and do not assume 32-lane warps in reductions.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={
                "aten.sort": _skipped("test_special_ops.py (test_sort)", "RESULT TODOFIX"),
                "aten.conv2d": _skipped("test_convolution_ops.py (test_accuracy_conv2d)",
                                        "RESULT TODOFIX"),
                "aten.scaled_dot_product_attention": _skipped(
                    "test_attention_ops.py (test_sdpa_*)", "RuntimeError"),
                "vllm.concat_and_cache_mla": _skipped(
                    "test_attention_ops.py and test_quant.py (test_concat_and_cache_mla)",
                    "RuntimeError"),
            },
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "cuda"
    flush_bytes = 256 * 1024 * 1024  # FlagTree third_party/hcu/python/triton/testing.py
    visible_devices_variable = "HIP_VISIBLE_DEVICES"  # HIP's variable; DTK is HIP-based (assumed)
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/kfd", "/dev/mkfd", "/dev/dri/*")

    def probe(self) -> Availability:
        steps = ProbeSteps()
        signs = hygon_signs()
        if not steps.step("hy-smi on PATH or /opt/dtk", signs, ", ".join(signs) or "neither"):
            return steps.unavailable("no Hygon DCU stack found (no hy-smi on PATH, no "
                                     "/opt/dtk); needs a Hygon DCU with DTK and DTK's torch")
        try:
            import torch
        except ImportError as error:
            steps.step("import torch", False, str(error))
            return steps.unavailable(f"needs DTK's torch build: {error}")
        steps.step("import torch", True, torch.__version__)
        hip = getattr(torch.version, "hip", None)
        if not steps.step("torch.version.hip (DTK's HIP build)", hip is not None, str(hip)):
            return steps.unavailable(f"torch.version.hip is None: torch {torch.__version__} "
                                     f"is not DTK's HIP build ({', '.join(signs)} found)")
        return (self.devices_seen(steps, f"DTK torch {torch.__version__}")
                or self.device_named(steps, lambda count, name: f"DTK (hip {hip}): "
                                     f"{count} device(s): {name} ({_arch(torch)})"))


def _arch(torch) -> str:
    """The first device's architecture (gfx...), as HIP builds of torch report it."""
    return getattr(torch.cuda.get_device_properties(0), "gcnArchName", "unknown arch")


@hookimpl
def kgb_register_backends(register):
    register(HygonBackend())
