"""The MetaX backend: MetaX GPUs through MACA builds of torch (device "cuda").

MACA's torch keeps the CUDA API (FlagGems: device "cuda"), so the probe needs a MetaX sign:
the ``MACA_PATH`` variable, which FlagTree's metax compiler requires ("Not found MACA_PATH"),
or MetaX's query command ``mx-smi`` (FlagGems' ``device_query_cmd``).

Sources (commits in README.md):
- FlagOpen/FlagGems src/flag_gems/runtime/backend/_metax/__init__.py: device "cuda", query
  command ``mx-smi``; CUSTOMIZED_UNUSED_OPS empty; MetaX is not in UNSUPPORT_FP64/BF16/INT64
  (src/flag_gems/runtime/backend/device.py).
- flagos-ai/FlagTree third_party/metax/backend/driver.py (target "maca", ``warp_size = 64``),
  third_party/metax/backend/compiler.py (asserts ``0 < num_warps <= 16``, a power of 2; needs
  MACA_PATH), third_party/metax/python/triton/testing.py (256e6-byte flush, torch.cuda events).
- FlagGems tests/ skip markers for ``vendor_name == "metax"`` (the deny-list).
"""

from __future__ import annotations

import os

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, ProbeSteps, Quirks,
                          TimingSettings, TorchDeviceBackend, command_on_path)


def _skipped(test_file: str, why: str) -> str:
    return (f"FlagGems skips its Triton kernel for this operator on MetaX with reason {why!r} "
            f"(FlagOpen/FlagGems tests/{test_file}); not known to run there")


class MetaxBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="metax",
        description="MetaX GPUs through MACA builds of torch (CUDA-API events, 256 MB flush)",
        quirks=Quirks(
            device_type="cuda",
            max_num_warps=16,  # FlagTree's metax compiler asserts num_warps <= 16
            prompt_hints=(
                "This is a MetaX GPU (MACA): tensors live on device 'cuda', a warp has 64 threads "
                "(FlagTree's metax driver), and num_warps must be a power of 2 no larger than 16.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={
                "aten.scaled_dot_product_attention": _skipped("test_attention_ops.py (test_sdpa_*)",
                                                              "TODOFIX"),
                "vllm.topk_softmax": _skipped("test_reduction_ops.py (test_topk_softmax)",
                                              "RunetimeError"),
                "vllm.concat_and_cache_mla": _skipped("test_quant.py (test_concat_and_cache_mla)",
                                                      "RuntimeError"),
            },
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000),
    )
    device_module_name = "cuda"
    flush_bytes = 256_000_000  # FlagTree third_party/metax/python/triton/testing.py: 256e6 bytes
    visible_devices_variable = None  # unknown: no public MetaX source for it was found
    # The device files a sandboxed runner needs (vendors' container docs; not run here).
    device_files = ("/dev/mxcd", "/dev/dri/*")

    def probe(self) -> Availability:
        steps = ProbeSteps()
        signs = []
        if os.environ.get("MACA_PATH"):
            signs.append(f"MACA_PATH={os.environ['MACA_PATH']}")
        if command_on_path("mx-smi"):
            signs.append("mx-smi on PATH")
        if not steps.step("MACA_PATH set or mx-smi on PATH", signs,
                          ", ".join(signs) or "neither"):
            return steps.unavailable("no MetaX MACA stack found (MACA_PATH unset, no mx-smi "
                                     "on PATH); needs a MetaX GPU with MACA and its torch build")
        try:
            import torch
        except ImportError as error:
            steps.step("import torch", False, str(error))
            return steps.unavailable(f"needs MACA's torch build: {error}")
        steps.step("import torch", True, torch.__version__)
        return (self.devices_seen(steps, f"torch {torch.__version__} ({', '.join(signs)})")
                or self.device_named(steps, lambda count, name:
                                     f"MACA ({', '.join(signs)}): {count} device(s): {name}"))


@hookimpl
def kgb_register_backends(register):
    register(MetaxBackend())
