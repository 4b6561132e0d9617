"""Does L2 persistence beat the timer's flush? A relu timed with kgb's CUDA timer, as is and
under the L2 settings a cheat would use (GPU only).

``python benchmarks/l2_persistence.py``: one relu kernel on inputs of a few sizes, timed by
kgb's NVIDIA timer (do_bench's clock: a 256 MB flush before every call) in five ways:
- ``plain``: the kernel alone;
- ``evict_last``: its loads with ``eviction_policy="evict_last"`` (a hint published kernels use);
- ``window kept``: L2 set aside for persisting accesses and an access-policy window over the
  input on the timer's stream, set once before timing (what tests/adversarial/gpu/
  l2_persisting_window.py does; the runner refuses it at import);
- ``window per call``: both set before each launch and undone after it (the runner refuses it at
  the launch: tests/adversarial/gpu/l2_window_only_around_its_launch.py);
- ``window per call, reset``: the same, with ``cuCtxResetPersistingL2Cache`` after each call.
A ratio well below 1 against ``plain`` is a timing the flush did not make honest; the runner's
device-state watch (kgb_backends/cuda_l2.py) exists for the variants that show one.
"""

from __future__ import annotations

import argparse
import ctypes

import torch
import triton
import triton.language as tl

from kgb_backends.cuda_l2 import persisting_l2_limit
from kgb_backends.nvidia import NvidiaBackend
from kgb_core.report import render_table
from kgb_core.timing import TimingSettings


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVICT_LAST: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if EVICT_LAST:
        x = tl.load(x_ptr + offsets, mask=mask, eviction_policy="evict_last")
    else:
        x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hit_ratio", ctypes.c_float), ("hit_prop", ctypes.c_int),
                ("miss_prop", ctypes.c_int), ("pad", ctypes.c_char * 36)]


class Persistence:
    """L2 persistence through the driver, as a cheat would set it (CUresults checked)."""

    def __init__(self) -> None:
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def _ok(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what}: CUresult {status}")

    def on(self, x: torch.Tensor, set_aside: int) -> None:
        self._ok(self.cuda.cuCtxSetLimit(6, ctypes.c_size_t(set_aside)), "cuCtxSetLimit")
        window = _Window(x.data_ptr(), x.numel() * x.element_size(), 1.0, 2, 1)
        self._ok(self.cuda.cuStreamSetAttribute(self.stream, 1, ctypes.byref(window)),
                 "cuStreamSetAttribute")

    def off(self, reset: bool = False) -> None:
        self.cuda.cuStreamSetAttribute(self.stream, 1, ctypes.byref(_Window(None, 0, 0.0, 0, 0)))
        self.cuda.cuCtxSetLimit(6, ctypes.c_size_t(0))
        if reset:
            self.cuda.cuCtxResetPersistingL2Cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", default="4,16,32", help="input sizes in MiB (float32)")
    args = parser.parse_args()
    torch.cuda.init()
    timer = NvidiaBackend().make_timer(TimingSettings(warmup_ms=25.0, rep_ms=100.0,
                                                      min_repetitions=10))
    props = torch.cuda.get_device_properties(0)
    set_aside = int(getattr(props, "persisting_l2_cache_max_size", 0) or (32 << 20))
    persistence = Persistence()
    print(f"{props.name}; L2 {props.L2_cache_size >> 20} MiB; persisting set-aside asked "
          f"{set_aside >> 20} MiB; limit before: {persisting_l2_limit()} bytes")
    rows = []
    for mib in (int(m) for m in args.mib.split(",")):
        x = torch.randn(mib * (1 << 18), device="cuda")
        out = torch.empty_like(x)
        n = x.numel()

        def launch(evict_last: bool = False) -> None:
            _relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, EVICT_LAST=evict_last)

        def per_call(reset: bool):
            def call() -> None:
                persistence.on(x, set_aside)
                launch()
                persistence.off(reset)
            return call

        results = {"plain": timer.measure(launch).median_ms,
                   "evict_last": timer.measure(lambda: launch(True)).median_ms}
        persistence.on(x, set_aside)
        try:
            results["window kept"] = timer.measure(launch).median_ms
        finally:
            persistence.off(reset=True)
        results["window per call"] = timer.measure(per_call(False)).median_ms
        results["window per call, reset"] = timer.measure(per_call(True)).median_ms
        persistence.off(reset=True)
        plain = results["plain"]
        for name, ms in results.items():
            rows.append([f"{mib}", name, f"{ms * 1e3:.1f}", f"{ms / plain:.2f}"])
    print(render_table(["input MiB", "variant", "median us", "vs plain"], rows))
    print(f"limit after: {persisting_l2_limit()} bytes")


if __name__ == "__main__":
    main()
