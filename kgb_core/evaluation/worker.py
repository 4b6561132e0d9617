"""The evaluation worker process: ``python -m kgb_core.evaluation.worker``.

It reads one JSON job per line on stdin and writes one JSON message per line to the file
descriptor named by ``KGB_RESULT_FD`` (not stdout, which the candidate may print to). The first
message is ``ready``, sent after torch, triton and the device are set up, with the versions
and device name the harness records for the run. Anything the candidate does to this process
(a crash, a hang, a poisoned CUDA context) is observed from outside by the harness.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import traceback
from typing import Any, TextIO

PROTOCOL_VERSION = 1


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message, default=str) + "\n")
    channel.flush()


def main() -> int:
    channel = os.fdopen(int(os.environ["KGB_RESULT_FD"]), "w", buffering=1)
    backend_name = os.environ["KGB_WORKER_BACKEND"]
    try:
        from kgb_core.plugins import load_registry

        registry = load_registry()
        backend = registry.backend(backend_name)
        from kgb_core.emulation import WORKER_EMULATES_VARIABLE, EmulatingBackend

        if os.environ.get(WORKER_EMULATES_VARIABLE):
            backend = EmulatingBackend(backend,
                                       registry.backend(os.environ[WORKER_EMULATES_VARIABLE]))
        device = backend.setup()
        import torch
        import triton

        from kgb_core.evaluation.checker import CandidateChecker, CheckSettings
        from kgb_core.evaluation.launches import LaunchCounter
        from kgb_core.timing import TimingSettings

        harness_stream = backend.current_stream()
        counter = LaunchCounter.for_backend(backend)
        counter.install()
        from kgb_core.evaluation.recorder import TorchOpRecorder

        with TorchOpRecorder():  # the first dispatch mode imports torch._dynamo (about 1 s):
            pass                 # pay it at start-up, not inside a candidate's first call
    except Exception as error:  # the harness turns this into a clear error for the user
        _send(channel, {"type": "startup_failed", "error": f"{type(error).__name__}: {error}",
                        "traceback": traceback.format_exc()})
        return 1

    _send(channel, {
        "type": "ready",
        "protocol": PROTOCOL_VERSION,
        "pid": os.getpid(),
        "device": device,
        "device_name": backend.device_name(),
        # The harness's device index this worker is pinned to (None: not pinned).
        "device_index": os.environ.get("KGB_DEVICE_INDEX"),
        "emulates": backend.emulates,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "platform": platform.platform(),
    })
    timers: dict[str, Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            spec = registry.operator(job["op"])
            timing_key = json.dumps(job.get("timing_settings") or {}, sort_keys=True)
            if timing_key not in timers:
                settings = TimingSettings.from_mapping(job.get("timing_settings") or {},
                                                       backend.default_timing)
                timers[timing_key] = backend.make_timer(settings)
            checker = CandidateChecker(backend, device, timers[timing_key], counter,
                                       harness_stream)
            result = checker.evaluate(spec, job["candidate_path"],
                                      CheckSettings(seeds=job["seeds"], timing=job["timing"]))
            _send(channel, {"type": "result", "job": job["job"], "result": result.to_dict()})
        except Exception as error:
            _send(channel, {"type": "harness_error", "job": job.get("job"),
                            "error": f"{type(error).__name__}: {error}",
                            "traceback": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
