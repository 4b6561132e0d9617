"""``kgb calibrate``: a device's copy bandwidth and matmul rates, the peaks a roofline needs.

Measured once per device with the backend's own timer (CUDA events and an L2 flush on NVIDIA),
so the report's roofline % compares a kernel's time with what the same clock shows the device
doing at its best through torch: a copy (``dst.copy_(src)``: read + write, counted as 2 x the
buffer) and a square matmul per dtype (2 n^3 FLOPs). These are *achieved* peaks, not the data
sheet's; a kernel can beat them slightly (roofline % > 100), and the report shows that as is.

Triton's interpreter has no performance to calibrate: on the CPU backend this measures torch's
own CPU rates with the wall clock and labels them ``torch-cpu-wallclock``; the report still
shows roofline % of interpreter timings as n/a, since interpreted kernels are no performance
numbers whatever the peaks are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kgb_core.backends import Backend
from kgb_core.timing import Timer, TimingSettings, WallClockTimer

# The dtype names a matmul peak is stored under are the operator dtypes they serve:
# "matmul_float32" is the IEEE fp32 rate (what the NVIDIA backend's references use: TF32 off),
# "matmul_tf32" is stored for information (a Triton kernel may use TF32 where allowed).
MATMUL_DTYPES = ("bfloat16", "float16", "float32")
COPY_METRIC = "copy_bandwidth"

TORCH_CPU_LABEL = "torch-cpu-wallclock"


def matmul_metric(dtype_name: str) -> str:
    return f"matmul_{dtype_name}"


@dataclass(frozen=True)
class CalibrationSizes:
    copy_bytes: int
    matmul_n: int

    @classmethod
    def for_device_type(cls, device_type: str) -> "CalibrationSizes":
        # On a GPU, sizes far past any cache and launch overhead (a 1 GiB copy, 8192^3 GEMMs:
        # what benchmarks/timer_calibration.py measured on the H200). On a CPU, torch's fp16
        # matmul has no fast path (about 1-2 GFLOP/s on this project's 2-core machine), so
        # n=512 keeps the whole calibration within seconds.
        if device_type == "cpu":
            return cls(copy_bytes=64 << 20, matmul_n=512)
        return cls(copy_bytes=1 << 30, matmul_n=8192)


def calibration_timer(backend: Backend, settings: TimingSettings) -> Timer:
    """The backend's timer, except where its timings measure no chip (Triton's interpreter):
    torch's own ops there run on the host, timed with a wall clock under a label that says
    what they are."""
    if not backend.timings_measure_hardware:
        return WallClockTimer(settings, backend.synchronize, label=TORCH_CPU_LABEL)
    return backend.make_timer(settings)


def _settings(backend: Backend) -> TimingSettings:
    defaults = backend.default_timing
    # A few more repetitions than a CPU sweep times with: a calibration is made once.
    return TimingSettings(warmup_ms=defaults.warmup_ms, rep_ms=max(defaults.rep_ms, 100.0),
                          min_repetitions=max(defaults.min_repetitions, 3),
                          max_repetitions=max(defaults.max_repetitions, 10))


def measure_peaks(backend: Backend, sizes: CalibrationSizes | None = None,
                  progress: Callable[[str], None] = lambda message: None) -> list[dict[str, Any]]:
    """Set the backend's device up in this process and measure; returns store-ready rows."""
    import torch

    device = backend.setup()
    device_type = torch.device(device).type
    sizes = sizes or CalibrationSizes.for_device_type(device_type)
    timer = calibration_timer(backend, _settings(backend))
    is_torch_cpu = timer.label == TORCH_CPU_LABEL
    what = "torch on the host CPU (not the Triton interpreter)" if is_torch_cpu else "torch"
    rows: list[dict[str, Any]] = []

    progress(f"copy of {sizes.copy_bytes >> 20} MiB")
    source = torch.empty(sizes.copy_bytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    target = torch.empty_like(source)
    copy = timer.measure(lambda: target.copy_(source))
    moved = 2 * sizes.copy_bytes
    rows.append({"metric": COPY_METRIC, "value": moved / (copy.median_ms * 1e-3), "unit": "B/s",
                 "timer_label": timer.label, "bytes": moved, "median_ms": copy.median_ms,
                 "cv": copy.cv, "repetitions": copy.repetitions, "measured_with": what})
    source = target = None  # free the copy buffers before the matmuls

    n = sizes.matmul_n
    flops = 2 * n ** 3
    cuda = device_type == "cuda"
    variants = [(dtype, dtype, False) for dtype in MATMUL_DTYPES]
    if cuda:  # TF32 is a tensor-core mode of CUDA devices; elsewhere there is none to measure
        variants.append(("tf32", "float32", True))
    for metric_dtype, dtype_name, tf32 in variants:
        progress(f"matmul {metric_dtype} {n}^3")
        dtype = getattr(torch, dtype_name)
        generator = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(n, n, generator=generator).to(device=device, dtype=dtype)
        b = torch.randn(n, n, generator=generator).to(device=device, dtype=dtype)
        previous = torch.backends.cuda.matmul.allow_tf32 if cuda else None
        if cuda:
            torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            timing = timer.measure(lambda: torch.mm(a, b))
        finally:
            if cuda:
                torch.backends.cuda.matmul.allow_tf32 = previous
        rows.append({"metric": matmul_metric(metric_dtype),
                     "value": flops / (timing.median_ms * 1e-3), "unit": "FLOP/s",
                     "timer_label": timer.label, "n": n, "flops": flops,
                     "median_ms": timing.median_ms, "cv": timing.cv,
                     "repetitions": timing.repetitions, "measured_with": what})
    for row in rows:
        row["torch"] = torch.__version__
    return rows


def format_peak(metric: str, value: float) -> str:
    if metric == COPY_METRIC:
        return f"{value / 1e9:.1f} GB/s"
    return f"{value / 1e12:.3g} TFLOP/s" if value >= 1e12 else f"{value / 1e9:.3g} GFLOP/s"
