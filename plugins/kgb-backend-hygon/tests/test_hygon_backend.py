"""kgb-backend-hygon where no Hygon DCU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Hygon DCU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import types

import pytest
import torch

import kgb_backend_hygon
from kgb_backend_hygon import HygonBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ()


class TestHygonBackendConformance(BackendPluginConformance):
    module = kgb_backend_hygon
    entry_name = "kgb-backend-hygon"
    backend_name = "hygon"
    backend_class = HygonBackend
    device_type = "cuda"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = set()
    expected_max_num_warps = 16
    expected_denied = {'aten.conv2d', 'vllm.concat_and_cache_mla', 'aten.scaled_dot_product_attention', 'aten.sort'}


def test_the_timer_names_the_vendor_events():
    assert HygonBackend().timer_label == "hygon:cuda-events+cache-flush"


@pytest.mark.skipif(bool(kgb_backend_hygon.hygon_signs()), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = HygonBackend().probe()
    assert not availability.available
    assert 'no Hygon DCU stack found' in availability.reason, availability.reason


def _fake_cuda(monkeypatch, *, devices: int, name: str):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: name)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index=0: types.SimpleNamespace(gcnArchName="gfx936"))


def test_probe_under_a_simulated_dtk_torch_reports_available(monkeypatch):
    _fake_cuda(monkeypatch, devices=1, name="simulated DCU")
    monkeypatch.setattr(torch.version, "hip", "5.16.0", raising=False)
    monkeypatch.setattr(kgb_backend_hygon, "hygon_signs", lambda: ["hy-smi on PATH"])
    availability = HygonBackend().probe()
    assert availability.available, availability.reason
    assert "hip 5.16.0" in availability.reason and "gfx936" in availability.reason


def test_probe_with_hy_smi_but_a_non_hip_torch_says_so(monkeypatch):
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    monkeypatch.setattr(kgb_backend_hygon, "hygon_signs", lambda: ["hy-smi on PATH"])
    availability = HygonBackend().probe()
    assert not availability.available and "torch.version.hip is None" in availability.reason
