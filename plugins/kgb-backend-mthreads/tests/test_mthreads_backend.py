"""kgb-backend-mthreads where no Moore Threads GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Moore Threads GPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch

import kgb_backend_mthreads
from kgb_backend_mthreads import MthreadsBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ('torch_musa',)


class TestMthreadsBackendConformance(BackendPluginConformance):
    module = kgb_backend_mthreads
    entry_name = "kgb-backend-mthreads"
    backend_name = "mthreads"
    backend_class = MthreadsBackend
    device_type = "musa"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = {'float64'}
    expected_max_num_warps = None
    expected_denied = set()


def test_the_timer_names_the_vendor_events():
    assert MthreadsBackend().timer_label == "mthreads:musa-events+cache-flush"


@pytest.mark.skipif(kgb_backend_mthreads.module_installed("torch_musa"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = MthreadsBackend().probe()
    assert not availability.available
    assert 'not available: needs torch_musa and a Moore Threads GPU' in availability.reason, availability.reason


def _fake_vendor_stack(monkeypatch, *, devices: int, triton_backends=('musa',)):
    """torch.musa as torch_musa would add it, with a stand-in torch_musa module."""
    monkeypatch.setattr(kgb_backend_mthreads, "module_installed", lambda name: name == 'torch_musa')
    monkeypatch.setitem(sys.modules, 'torch_musa', types.ModuleType('torch_musa'))
    monkeypatch.setattr(torch, 'musa', types.SimpleNamespace(
        is_available=lambda: devices > 0, device_count=lambda: devices,
        get_device_name=lambda index=0: "simulated Moore Threads GPU"), raising=False)
    monkeypatch.setattr(kgb_backend_mthreads, "triton_backends_installed",
                        lambda: sorted(triton_backends), raising=False)


def test_probe_under_a_simulated_torch_musa_reports_available(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=2)
    availability = MthreadsBackend().probe()
    assert availability.available, availability.reason
    assert "2 " in availability.reason


def test_probe_under_a_simulated_torch_musa_without_devices_names_the_variable(monkeypatch):
    _fake_vendor_stack(monkeypatch, devices=0)
    availability = MthreadsBackend().probe()
    assert not availability.available
    assert "sees no device" in availability.reason and 'MUSA_VISIBLE_DEVICES' in availability.reason
