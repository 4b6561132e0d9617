"""kgb-backend-kunlunxin where no Kunlunxin XPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Kunlunxin XPU ran anything. The "available" cases monkeypatch torch (and the
vendor module) to look like the vendor's stack and check only what the probe concludes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types

import pytest
import torch

import kgb_backend_kunlunxin
from kgb_backend_kunlunxin import KunlunxinBackend
from kgb_core.backends import Backend
from kgb_core.operators import KNOWN_DTYPES
from kgb_core.plugins import load_registry

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
VENDOR_RUNTIMES = ()


def test_registers_one_backend_named_kunlunxin():
    registry = load_registry(entry_points=False, extra=[("kgb-backend-kunlunxin", kgb_backend_kunlunxin)])
    backend = registry.backend("kunlunxin")
    assert isinstance(backend, KunlunxinBackend) and isinstance(backend, Backend)
    assert backend.quirks.device_type == "cuda"
    assert backend.timer_label == "kunlunxin:cuda-events+cache-flush"


@pytest.mark.skipif(kgb_backend_kunlunxin.command_on_path("xpu-smi") or "xpu" in kgb_backend_kunlunxin.triton_backends_installed(), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = KunlunxinBackend().probe()
    assert not availability.available
    assert 'no Kunlunxin stack found' in availability.reason, availability.reason


def test_quirks_are_well_formed():
    quirks = KunlunxinBackend.quirks
    assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
    assert all(reason.strip() for reason in quirks.skipped_dtypes.values())
    assert set(quirks.skipped_dtypes) == {'float64'}
    if quirks.max_num_warps is not None:
        assert quirks.max_num_warps & (quirks.max_num_warps - 1) == 0
    assert quirks.max_num_warps == None
    assert quirks.prompt_hints and all(hint.strip() for hint in quirks.prompt_hints)
    assert KunlunxinBackend.flush_bytes > 0


def test_denied_operators_are_real_kgb_operators_with_reasons():
    quirks = KunlunxinBackend.quirks
    registry = load_registry()
    for operator_id, reason in quirks.denied_operators.items():
        assert OPERATOR_ID.match(operator_id), operator_id
        assert "FlagGems" in reason or "triton-ascend" in reason, reason  # every entry is cited
        assert registry.operator(operator_id).id == operator_id
    assert set(quirks.denied_operators) == {'aten.conv1d', 'aten.conv2d', 'aten.scaled_dot_product_attention', 'aten.sort'}


def test_registration_imports_neither_torch_nor_the_vendor_runtime(tmp_path):
    """Fresh interpreter; the vendor runtime modules are traps that raise if imported."""
    for name in VENDOR_RUNTIMES:
        (tmp_path / f"{name}.py").write_text("raise RuntimeError('imported at registration')\n")
    code = (
        "import sys, kgb_backend_kunlunxin\n"
        "from kgb_core.plugins import load_registry\n"
        "r = load_registry(entry_points=False, extra=[('kgb-backend-kunlunxin', kgb_backend_kunlunxin)])\n"
        "assert r.names('backend') == ['kunlunxin'], r.names('backend')\n"
        "heavy = ('torch', 'triton') + tuple(%r)\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n" % (VENDOR_RUNTIMES,)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


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
