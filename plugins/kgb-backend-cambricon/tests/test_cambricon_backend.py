"""kgb-backend-cambricon where no Cambricon MLU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Cambricon MLU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch

import kgb_backend_cambricon
from kgb_backend_cambricon import CambriconBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ('torch_mlu',)


class TestCambriconBackendConformance(BackendPluginConformance):
    module = kgb_backend_cambricon
    entry_name = "kgb-backend-cambricon"
    backend_name = "cambricon"
    backend_class = CambriconBackend
    device_type = "mlu"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = {'float64'}
    expected_max_num_warps = 4
    expected_denied = {'aten.sort'}


def test_the_timer_names_the_vendor_events():
    assert CambriconBackend().timer_label == "cambricon:mlu-events+cache-flush"


@pytest.mark.skipif(kgb_backend_cambricon.module_installed("torch_mlu"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = CambriconBackend().probe()
    assert not availability.available
    assert 'not available: needs torch_mlu and a Cambricon MLU' in availability.reason, availability.reason


def _fake_vendor_stack(monkeypatch, *, devices: int, triton_backends=('mlu',)):
    """torch.mlu as torch_mlu would add it, with a stand-in torch_mlu module."""
    monkeypatch.setattr(kgb_backend_cambricon, "module_installed", lambda name: name == 'torch_mlu')
    monkeypatch.setitem(sys.modules, 'torch_mlu', types.ModuleType('torch_mlu'))
    monkeypatch.setattr(torch, 'mlu', types.SimpleNamespace(
        is_available=lambda: devices > 0, device_count=lambda: devices,
        get_device_name=lambda index=0: "simulated Cambricon MLU"), raising=False)
    monkeypatch.setattr(kgb_backend_cambricon, "triton_backends_installed",
                        lambda: sorted(triton_backends), raising=False)


def test_probe_under_a_simulated_torch_mlu_reports_available(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=2)
    availability = CambriconBackend().probe()
    assert availability.available, availability.reason
    assert "2 " in availability.reason


def test_probe_under_a_simulated_torch_mlu_without_devices_names_the_variable(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=0)
    availability = CambriconBackend().probe()
    assert not availability.available
    assert "sees no device" in availability.reason and 'MLU_VISIBLE_DEVICES' in availability.reason


def test_probe_without_the_vendors_triton_says_so(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=1, triton_backends=("nvidia",))
    availability = CambriconBackend().probe()
    assert not availability.available and "Triton has no 'mlu' backend" in availability.reason
