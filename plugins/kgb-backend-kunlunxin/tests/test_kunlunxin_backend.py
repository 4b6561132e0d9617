"""kgb-backend-kunlunxin where no Kunlunxin XPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Kunlunxin XPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import types

import pytest
import torch

import kgb_backend_kunlunxin
from kgb_backend_kunlunxin import KunlunxinBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ()


class TestKunlunxinBackendConformance(BackendPluginConformance):
    module = kgb_backend_kunlunxin
    entry_name = "kgb-backend-kunlunxin"
    backend_name = "kunlunxin"
    backend_class = KunlunxinBackend
    device_type = "cuda"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = {'float64'}
    expected_max_num_warps = None
    expected_denied = {'aten.conv1d', 'aten.conv2d', 'aten.scaled_dot_product_attention', 'aten.sort'}


def test_the_timer_names_the_vendor_events():
    assert KunlunxinBackend().timer_label == "kunlunxin:cuda-events+cache-flush"


@pytest.mark.skipif(kgb_backend_kunlunxin.command_on_path("xpu-smi") or "xpu" in kgb_backend_kunlunxin.triton_backends_installed(), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = KunlunxinBackend().probe()
    assert not availability.available
    assert 'no Kunlunxin stack found' in availability.reason, availability.reason


def _fake_cuda(monkeypatch, *, devices: int, name: str):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: name)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index=0: types.SimpleNamespace(gcnArchName="gfx936"))


def test_probe_under_a_simulated_xpu_stack_reports_available(monkeypatch):
    monkeypatch.setattr(kgb_backend_kunlunxin, "triton_backends_installed", lambda: ["xpu"])
    monkeypatch.setattr(kgb_backend_kunlunxin, "command_on_path", lambda name: name == "xpu-smi")
    _fake_cuda(monkeypatch, devices=8, name="simulated Kunlunxin P800")
    availability = KunlunxinBackend().probe()
    assert availability.available, availability.reason
    assert "8 device(s)" in availability.reason


def test_probe_with_xpu_smi_but_no_xpu_triton_says_so(monkeypatch):
    monkeypatch.setattr(kgb_backend_kunlunxin, "triton_backends_installed", lambda: ["nvidia"])
    monkeypatch.setattr(kgb_backend_kunlunxin, "command_on_path", lambda name: name == "xpu-smi")
    availability = KunlunxinBackend().probe()
    assert not availability.available and "no 'xpu' backend" in availability.reason
