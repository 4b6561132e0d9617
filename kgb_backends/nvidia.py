"""The NVIDIA backend: CUDA devices through torch and Triton's NVIDIA compiler.

Timing follows ``triton.testing.do_bench``: CUDA events around each call on the current stream,
an L2 flush (a 256 MB write, larger than any current L2: H200 has 60 MB) before every timed
call so the candidate never reads its inputs from a warm cache, a time-budgeted warm-up and the
median of the repetitions.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Callable

from kgb_core import hookimpl
from kgb_core.backends import Availability, ChipProfile, ProbeCheck, Quirks
from kgb_core.operators import LARGE, SMALL
from kgb_core.timing import TimingSettings
from kgb_core.torch_device import TorchDeviceBackend

L2_FLUSH_BYTES = 256 * 1024 * 1024


class NvidiaBackend(TorchDeviceBackend):
    """The shared GPU base (``kgb_core.torch_device``), as every vendor plugin uses it, with
    what is NVIDIA's own: its probe, the raw stream handle, the L2-persistence watch, and the
    runner template's warm-up of Triton's CUDA compiler."""

    profile = ChipProfile(
        name="nvidia",
        description="NVIDIA GPUs through CUDA (timings with CUDA events and an L2 flush)",
        quirks=Quirks(
            device_type="cuda",
            max_num_warps=32,
            prompt_hints=(
                "Pass allow_tf32=False (or input_precision='ieee') to tl.dot for float32 inputs: "
                "the reference computes float32 matmuls in full precision.",
            ),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
        ),
        # With the device lead (TimingSettings.device_lead): the runner's recorded call takes
        # the host 0.5-2 ms to issue, longer than the L2 flush and a small kernel, so without
        # it the device waited for the launch inside the timed region, by as much as the
        # host's load allowed. On the H100 with 8 workers (benchmarks/RESULTS.md, twenty-second
        # session) two passes of the same sweep without it differed by 0.85-1.90 per operator
        # (p10-p90; aten.arange read 0.27 of torch's speed, aten.argmin 0.26), with it by
        # 0.998-1.023 (aten.arange 6.8, aten.argmin 0.98, aten.abs at torch's speed);
        # KernelBench's problems with it matched Triton's do_bench (geometric mean 0.740
        # against 0.733). With the calls that outran their lead left out (twenty-third
        # session), two passes agreed to a geometric mean of 0.997 (p10 0.982, p90 1.007).
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10,
                                        max_repetitions=1000, device_lead=True),
        # Not yet shown on hardware that the CUDA driver and Triton start no threads of their own
        # during a first launch; until it is, only Python-made threads count as deferred work here.
        watch_os_threads=False,
    )
    device_module_name = "cuda"
    flush_bytes = L2_FLUSH_BYTES
    visible_devices_variable = "CUDA_VISIBLE_DEVICES"
    # What the NVIDIA container toolkit binds into a container for one GPU, as patterns.
    device_files = ("/dev/nvidia[0-9]*", "/dev/nvidiactl", "/dev/nvidia-uvm",
                    "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia-caps/*")

    @property
    def timer_label(self) -> str:
        return "cuda-events+l2-flush"  # the label every stored NVIDIA timing carries

    def probe(self) -> Availability:
        smi = shutil.which("nvidia-smi")
        driver = ProbeCheck("NVIDIA driver (nvidia-smi on PATH or /dev/nvidiactl)",
                            bool(smi) or os.path.exists("/dev/nvidiactl"),
                            smi or ("/dev/nvidiactl" if os.path.exists("/dev/nvidiactl") else
                                    "neither found"))
        checks = [driver]
        if not driver.ok:
            return Availability(False, "no NVIDIA driver found (no nvidia-smi, no /dev/nvidiactl); "
                                       "needs an NVIDIA GPU with its driver and a CUDA build of torch",
                                tuple(checks))
        try:
            import torch
        except ImportError as error:
            checks.append(ProbeCheck("import torch", False, str(error)))
            return Availability(False, f"needs torch: {error}", tuple(checks))
        cuda_build = torch.version.cuda
        checks.append(ProbeCheck("import torch", True, torch.__version__))
        checks.append(ProbeCheck("torch built with CUDA (torch.version.cuda)", bool(cuda_build),
                                 cuda_build or "a CPU-only (or ROCm) build"))
        visible = torch.cuda.is_available()
        checks.append(ProbeCheck("torch.cuda.is_available()", visible,
                                 f"{torch.cuda.device_count()} device(s)" if visible else
                                 f"False (CUDA_VISIBLE_DEVICES="
                                 f"{os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"))
        if not visible:
            return Availability(False, f"torch {torch.__version__} sees no CUDA device "
                                       f"(a CPU-only torch build, or CUDA_VISIBLE_DEVICES hides them)",
                                tuple(checks))
        checks.append(ProbeCheck("torch.cuda.get_device_name(0)", True,
                                 torch.cuda.get_device_name(0)))
        return Availability(True, f"{torch.cuda.device_count()} CUDA device(s): "
                                  f"{torch.cuda.get_device_name(0)}", tuple(checks))

    def setup(self) -> str:
        import torch

        torch.cuda.init()
        # The base's setup then makes the reference at least as accurate as an
        # fp32-accumulating kernel: float32 matmuls in float32 (no TF32), and no fp16/bf16
        # partial sums in cuBLAS's split-K kernels. Measured on an H200 (torch 2.11): with
        # reduced-precision reductions allowed (PyTorch's default) a 300x700x500 bf16 torch.mm
        # was off the float64 product by up to 16%, and a correct fp32-accumulating kernel
        # failed the tolerance against it.
        return super().setup()

    def current_stream(self) -> object | None:
        import torch

        # The raw handle, as Triton's own launcher reads it (torch.cuda.current_stream() builds
        # a Stream object): the launch counter probes this on every launch, timed ones included.
        return torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())

    def device_state_watch(self) -> Callable[[], list[str]] | None:
        from kgb_backends.cuda_l2 import persisting_l2_watch

        return persisting_l2_watch(self.current_stream())

    def device_name(self) -> str:
        import torch

        # The card's name alone: calibrated peaks are stored and looked up under it.
        return torch.cuda.get_device_name(0)

    def warm_runner_cache(self) -> None:
        """Triton's CUDA driver utilities (a C module Triton compiles with gcc and caches):
        compiled here once instead of in every runner."""
        from triton.runtime import driver

        driver.active.utils  # noqa: B018 - compiling and loading it is the point

    def warm_template(self) -> None:
        from kgb_backends.triton_warmup import compile_for_target, visible_cuda_arch

        arch = visible_cuda_arch()
        if arch is None:
            return
        try:
            compile_for_target("cuda", arch, 32)
        except Exception as error:  # only time is lost: each runner initialises it instead
            print(f"kgb: Triton's compiler was not warmed in the runner template: "
                  f"{type(error).__name__}: {error}", file=sys.stderr)


@hookimpl
def kgb_register_backends(register):
    register(NvidiaBackend())
