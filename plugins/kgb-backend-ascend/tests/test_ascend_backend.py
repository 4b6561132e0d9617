"""kgb-backend-ascend where no Ascend NPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Ascend NPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch

import kgb_backend_ascend
from kgb_backend_ascend import AscendBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ('torch_npu',)


class TestAscendBackendConformance(BackendPluginConformance):
    module = kgb_backend_ascend
    entry_name = "kgb-backend-ascend"
    backend_name = "ascend"
    backend_class = AscendBackend
    device_type = "npu"
    cited_sources = ("FlagGems", "triton-ascend")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = {'float64'}
    expected_max_num_warps = None
    expected_denied = {'aten.sort'}


def test_the_timer_names_the_vendor_events():
    assert AscendBackend().timer_label == "ascend:npu-events+cache-flush"


@pytest.mark.skipif(kgb_backend_ascend.module_installed("torch_npu"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = AscendBackend().probe()
    assert not availability.available
    assert 'not available: needs torch_npu and an Ascend device' in availability.reason, availability.reason


def _fake_vendor_stack(monkeypatch, *, devices: int, triton_backends=('ascend',)):
    """torch.npu as torch_npu would add it, with a stand-in torch_npu module."""
    monkeypatch.setattr(kgb_backend_ascend, "module_installed", lambda name: name == 'torch_npu')
    monkeypatch.setitem(sys.modules, 'torch_npu', types.ModuleType('torch_npu'))
    monkeypatch.setattr(torch, 'npu', types.SimpleNamespace(
        is_available=lambda: devices > 0, device_count=lambda: devices,
        get_device_name=lambda index=0: "simulated Ascend NPU"), raising=False)
    monkeypatch.setattr(kgb_backend_ascend, "triton_backends_installed",
                        lambda: sorted(triton_backends), raising=False)


def test_probe_under_a_simulated_torch_npu_reports_available(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=2)
    availability = AscendBackend().probe()
    assert availability.available, availability.reason
    assert "2 " in availability.reason


def test_probe_under_a_simulated_torch_npu_without_devices_names_the_variable(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=0)
    availability = AscendBackend().probe()
    assert not availability.available
    assert "sees no device" in availability.reason and 'ASCEND_RT_VISIBLE_DEVICES' in availability.reason


def test_probe_without_the_vendors_triton_says_so(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=1, triton_backends=("nvidia",))
    availability = AscendBackend().probe()
    assert not availability.available and "Triton has no 'ascend' backend" in availability.reason
