"""Calibrate a backend's timer against known ceilings: a device copy and a bf16/fp32 GEMM.

Run on a GPU machine: ``python benchmarks/timer_calibration.py --backend nvidia``. The table
gives what kgb's own timer measures next to the numbers measured on this project's H200 with
other tools (copy 4.27 TB/s, bf16 GEMM ~680 TFLOP/s, tf32 ~360, fp32 ~51); a timer that
disagrees badly is broken (e.g. not synchronizing, or timing the launch only).
"""

from __future__ import annotations

import argparse

from kgb_core.plugins import load_registry
from kgb_core.report import render_table
from kgb_core.timing import TimingSettings

KNOWN_H200 = {"copy": "4.27 TB/s", "gemm bf16": "~680 TFLOP/s", "gemm tf32": "~360 TFLOP/s",
              "gemm fp32": "~51 TFLOP/s"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="nvidia")
    args = parser.parse_args()
    backend = load_registry().backend(args.backend)
    availability = backend.probe()
    if not availability.available:
        raise SystemExit(f"backend {args.backend} is not available here: {availability.reason}")
    device = backend.setup()
    import torch

    timer = backend.make_timer(TimingSettings.from_mapping({}, backend.default_timing))
    rows = []

    n_bytes = 1 << 30
    source = torch.empty(n_bytes // 4, dtype=torch.float32, device=device)
    target = torch.empty_like(source)
    copy = timer.measure(lambda: target.copy_(source))
    rows.append(["copy 1 GiB", f"{2 * n_bytes / copy.median_ms / 1e9:.2f} TB/s",
                 f"{copy.median_ms:.4f}", f"{copy.cv:.3f}", copy.repetitions,
                 KNOWN_H200["copy"]])

    size = 8192
    for label, dtype, tf32 in (("gemm bf16", torch.bfloat16, False),
                               ("gemm tf32", torch.float32, True),
                               ("gemm fp32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(size, size, device=device, dtype=dtype)
        b = torch.randn(size, size, device=device, dtype=dtype)
        timing = timer.measure(lambda: a @ b)
        rows.append([f"{label} {size}^3", f"{2 * size ** 3 / timing.median_ms / 1e9:.1f} TFLOP/s",
                     f"{timing.median_ms:.4f}", f"{timing.cv:.3f}", timing.repetitions,
                     KNOWN_H200[label]])
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"timer: {timer.label} on {backend.device_name()} (torch {torch.__version__})")
    print(render_table(["what", "kgb timer", "median ms", "cv", "reps", "measured before"], rows))


if __name__ == "__main__":
    main()
