"""kgb-backend-iluvatar where no Iluvatar CoreX GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Iluvatar CoreX GPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import types

import pytest
import torch

import kgb_backend_iluvatar
from kgb_backend_iluvatar import IluvatarBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ()


class TestIluvatarBackendConformance(BackendPluginConformance):
    module = kgb_backend_iluvatar
    entry_name = "kgb-backend-iluvatar"
    backend_name = "iluvatar"
    backend_class = IluvatarBackend
    device_type = "cuda"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = {'float64'}
    expected_max_num_warps = None
    expected_denied = set()


def test_the_timer_names_the_vendor_events():
    assert IluvatarBackend().timer_label == "iluvatar:cuda-events+cache-flush"


@pytest.mark.skipif(hasattr(torch, "corex"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = IluvatarBackend().probe()
    assert not availability.available
    assert "has no torch.corex, so it is not CoreX's build" in availability.reason, availability.reason


def _fake_cuda(monkeypatch, *, devices: int, name: str):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: name)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index=0: types.SimpleNamespace(gcnArchName="gfx936"))


def test_probe_under_a_simulated_corex_torch_reports_available(monkeypatch):
    monkeypatch.setattr(torch, "corex", types.SimpleNamespace(), raising=False)
    _fake_cuda(monkeypatch, devices=1, name="simulated Iluvatar BI-V150")
    availability = IluvatarBackend().probe()
    assert availability.available, availability.reason
    assert "CoreX: 1 device(s)" in availability.reason


def test_probe_under_a_simulated_corex_torch_without_devices(monkeypatch):
    monkeypatch.setattr(torch, "corex", types.SimpleNamespace(), raising=False)
    _fake_cuda(monkeypatch, devices=0, name="none")
    availability = IluvatarBackend().probe()
    assert not availability.available and "CUDA_VISIBLE_DEVICES" in availability.reason
