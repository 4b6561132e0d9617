"""kgb-backend-amd where no AMD GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims an AMD GPU ran anything. The "available" case monkeypatches torch to look
like a ROCm build with one device and checks only what the probe concludes from that.
"""

from __future__ import annotations

import re
import subprocess
import sys
import types

import pytest
import torch

import kgb_backend_amd
from kgb_backend_amd import AmdBackend
from kgb_core.backends import Backend
from kgb_core.operators import KNOWN_DTYPES
from kgb_core.plugins import load_registry

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
ON_ROCM = getattr(torch.version, "hip", None) is not None


def _registered():
    registry = load_registry(entry_points=False, extra=[("kgb-backend-amd", kgb_backend_amd)])
    return registry.backend("amd")


def test_registers_one_backend_named_amd():
    backend = _registered()
    assert isinstance(backend, AmdBackend) and isinstance(backend, Backend)
    assert backend.quirks.device_type == "cuda"


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


def test_quirks_are_well_formed():
    quirks = AmdBackend.quirks
    assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
    assert all(reason for reason in quirks.skipped_dtypes.values())
    assert quirks.max_num_warps == 16
    assert all(OPERATOR_ID.match(op) and reason for op, reason in quirks.denied_operators.items())
    assert quirks.prompt_hints and AmdBackend.flush_bytes == 256 * 1024 * 1024


def test_registration_imports_neither_torch_nor_triton():
    """In a fresh interpreter: import the plugin and register it; nothing heavy is loaded."""
    code = (
        "import sys, kgb_backend_amd\n"
        "from kgb_core.plugins import load_registry\n"
        "r = load_registry(entry_points=False, extra=[('kgb-backend-amd', kgb_backend_amd)])\n"
        "assert r.names('backend') == ['amd'], r.names('backend')\n"
        "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
