"""kgb-backend-amd where no AMD GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims an AMD GPU ran anything. The "available" case monkeypatches torch to look
like a ROCm build with one device and checks only what the probe concludes from that.
"""

from __future__ import annotations

import types

import pytest
import torch

import kgb_backend_amd
from kgb_backend_amd import AmdBackend
from kgb_core.plugin_conformance import BackendPluginConformance

ON_ROCM = getattr(torch.version, "hip", None) is not None


class TestAmdBackendConformance(BackendPluginConformance):
    module = kgb_backend_amd
    entry_name = "kgb-backend-amd"
    backend_name = "amd"
    backend_class = AmdBackend
    device_type = "cuda"
    cited_sources = ("FlagGems", "FlagTree", "triton-ascend")
    expected_skipped_dtypes = set()
    expected_max_num_warps = 16
    expected_denied = set()


def test_the_flush_is_the_size_rocm_triton_uses():
    assert AmdBackend.flush_bytes == 256 * 1024 * 1024


@pytest.mark.skipif(ON_ROCM, reason="this torch is a ROCm build: the not-ROCm message can't show")
def test_probe_on_a_cuda_or_cpu_build_says_it_is_not_rocm():
    availability = AmdBackend().probe()
    assert not availability.available
    assert "torch.version.hip is None: this is not a ROCm build" in availability.reason


def _fake_rocm_torch(monkeypatch, *, devices: int):
    monkeypatch.setattr(torch.version, "hip", "6.2.41133", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "AMD Instinct MI300X")
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index=0: types.SimpleNamespace(gcnArchName="gfx942:sramecc+:xnack-"))
    monkeypatch.setattr(kgb_backend_amd, "looks_like_hygon", lambda: False)


def test_probe_under_a_simulated_rocm_torch_reports_available(monkeypatch):
    _fake_rocm_torch(monkeypatch, devices=1)
    availability = AmdBackend().probe()
    assert availability.available, availability.reason
    assert "hip 6.2.41133" in availability.reason and "gfx942" in availability.reason


def test_probe_under_a_simulated_rocm_torch_without_devices_names_the_variable(monkeypatch):
    _fake_rocm_torch(monkeypatch, devices=0)
    availability = AmdBackend().probe()
    assert not availability.available
    assert "sees no device" in availability.reason and "HIP_VISIBLE_DEVICES" in availability.reason


def test_probe_defers_to_the_hygon_backend_on_a_dcu(monkeypatch):
    _fake_rocm_torch(monkeypatch, devices=1)
    monkeypatch.setattr(kgb_backend_amd, "looks_like_hygon", lambda: True)
    availability = AmdBackend().probe()
    assert not availability.available and "'hygon' backend" in availability.reason
