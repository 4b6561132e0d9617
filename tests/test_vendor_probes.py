"""The probe the torch-extension chips share (``TorchDeviceBackend.probe_extension``: Ascend,
Cambricon, Moore Threads): one piece of code, each step reported for ``kgb doctor``. None of
those chips is here; the stand-ins below replace only what the probe looks up."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from kgb_backend_ascend import AscendBackend
from kgb_backend_cambricon import CambriconBackend
from kgb_backend_mthreads import MthreadsBackend

# backend, its runtime module, its torch device module, its tool, its Triton backend
CHIPS = [(AscendBackend, "torch_npu", "npu", "npu-smi", "ascend"),
         (CambriconBackend, "torch_mlu", "mlu", "cnmon", "mlu"),
         (MthreadsBackend, "torch_musa", "musa", "mthreads-gmi", None)]


def _probe(backend_class, runtime, device, *, installed=True, imports=True, devices=2,
           triton=("nvidia",), monkeypatch):
    module = types.ModuleType(runtime)
    if imports:
        monkeypatch.setitem(sys.modules, runtime, module)
    else:
        monkeypatch.setitem(sys.modules, runtime, None)  # import raises ImportError
    monkeypatch.setattr(torch, device, types.SimpleNamespace(
        is_available=lambda: devices > 0, device_count=lambda: devices,
        get_device_name=lambda index=0: f"simulated {device}"), raising=False)
    backend = backend_class()
    return backend.probe_extension(
        runtime=runtime, needs="a chip", chip="Chip X", tool="chip-smi",
        triton_backend=None if backend_class is MthreadsBackend else device,
        triton_name="the chip's Triton", installed=lambda name: installed,
        on_path=lambda name: False, triton_backends=lambda: list(triton))


@pytest.mark.parametrize("backend_class, runtime, device, tool, triton_backend", CHIPS)
def test_each_step_is_reported_up_to_the_first_that_fails(backend_class, runtime, device, tool,
                                                          triton_backend, monkeypatch):
    missing = _probe(backend_class, runtime, device, installed=False, monkeypatch=monkeypatch)
    assert not missing.available
    assert [(c.what, c.ok) for c in missing.checks] == [("chip-smi on PATH", False),
                                                        (f"{runtime} installed", False)]
    broken = _probe(backend_class, runtime, device, imports=False, monkeypatch=monkeypatch)
    assert not broken.available and f"{runtime} failed to import" in broken.reason
    assert broken.checks[-1].what == f"import {runtime}" and not broken.checks[-1].ok
    none = _probe(backend_class, runtime, device, devices=0, monkeypatch=monkeypatch)
    assert "sees no device" in none.reason
    assert none.checks[-1] == (f"torch.{device}.is_available()", False, "False")
    ready = _probe(backend_class, runtime, device, triton=(device, "nvidia"),
                   monkeypatch=monkeypatch)
    assert ready.available and ready.reason == f"2 Chip X(s): simulated {device}"
    assert all(check.ok for check in ready.checks[1:])
    if triton_backend is not None:
        no_triton = _probe(backend_class, runtime, device, monkeypatch=monkeypatch)
        assert not no_triton.available
        assert f"Triton has no '{device}' backend" in no_triton.reason
        assert no_triton.checks[-1][:2] == (f"Triton backend '{device}'", False)


@pytest.mark.parametrize("backend_class, runtime, device, tool, triton_backend", CHIPS)
def test_here_each_vendor_probe_says_what_it_found(backend_class, runtime, device, tool,
                                                   triton_backend):
    availability = backend_class().probe()
    if availability.available:  # pragma: no cover - a machine with the vendor's stack
        pytest.skip(f"{runtime} is here")
    assert availability.checks and availability.checks[0].what == f"{tool} on PATH"
    assert any(not check.ok for check in availability.checks)


VENDORS = ("amd", "ascend", "cambricon", "hygon", "iluvatar", "kunlunxin", "metax", "mthreads")


@pytest.mark.parametrize("name", VENDORS)
def test_every_vendor_probe_lists_its_steps_for_kgb_doctor(name, registry):
    availability = registry.backend(name).probe()
    if availability.available:  # pragma: no cover - a machine with that chip
        pytest.skip(f"{name} is here")
    assert availability.checks, f"{name}'s probe lists no steps"
    assert not availability.checks[-1].ok  # the step it stopped at


def test_nvidia_is_the_shared_gpu_base_with_only_its_own_parts_written_again():
    """One way to write a GPU backend: NVIDIA's is a TorchDeviceBackend like every vendor's,
    keeping the label its stored timings carry; releasing memory where CUDA was never started
    (this machine, or a judge that never touched the GPU) starts nothing."""
    from kgb_backends.nvidia import NvidiaBackend
    from kgb_core.torch_device import TorchDeviceBackend

    nvidia = NvidiaBackend()
    assert isinstance(nvidia, TorchDeviceBackend)
    own = {name for name, value in vars(NvidiaBackend).items() if callable(value)}
    assert own <= {"probe", "setup", "current_stream", "device_state_watch", "device_name",
                   "warm_runner_cache", "warm_template"}, own
    assert nvidia.timer_label == "cuda-events+l2-flush"
    assert "/dev/nvidiactl" in nvidia.sandbox_device_files()
    assert nvidia.ray_resources() == {"num_gpus": 1}
    nvidia.release_cached_memory()
    assert not torch.cuda.is_initialized()
