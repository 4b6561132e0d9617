"""kgb-backend-metax where no MetaX GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a MetaX GPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import os
import types

import pytest
import torch

import kgb_backend_metax
from kgb_backend_metax import MetaxBackend
from kgb_core.plugin_conformance import BackendPluginConformance

VENDOR_RUNTIMES = ()


class TestMetaxBackendConformance(BackendPluginConformance):
    module = kgb_backend_metax
    entry_name = "kgb-backend-metax"
    backend_name = "metax"
    backend_class = MetaxBackend
    device_type = "cuda"
    cited_sources = ("FlagGems", "FlagTree")
    vendor_runtimes = VENDOR_RUNTIMES
    expected_skipped_dtypes = set()
    expected_max_num_warps = 16
    expected_denied = {'vllm.concat_and_cache_mla', 'aten.scaled_dot_product_attention', 'vllm.topk_softmax'}


def test_the_timer_names_the_vendor_events():
    assert MetaxBackend().timer_label == "metax:cuda-events+cache-flush"


@pytest.mark.skipif(bool(os.environ.get("MACA_PATH")) or kgb_backend_metax.command_on_path("mx-smi"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = MetaxBackend().probe()
    assert not availability.available
    assert 'no MetaX MACA stack found' in availability.reason, availability.reason


def _fake_cuda(monkeypatch, *, devices: int, name: str):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: name)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index=0: types.SimpleNamespace(gcnArchName="gfx936"))


def test_probe_under_a_simulated_maca_stack_reports_available(monkeypatch):
    monkeypatch.setenv("MACA_PATH", "/opt/maca")
    _fake_cuda(monkeypatch, devices=1, name="simulated MetaX C500")
    availability = MetaxBackend().probe()
    assert availability.available, availability.reason
    assert "MACA_PATH=/opt/maca" in availability.reason


def test_probe_with_maca_but_no_device(monkeypatch):
    monkeypatch.setenv("MACA_PATH", "/opt/maca")
    _fake_cuda(monkeypatch, devices=0, name="none")
    availability = MetaxBackend().probe()
    assert not availability.available and "sees no device" in availability.reason
