"""kgb-backend-ascend where no Ascend NPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Ascend NPU ran anything. The "available" cases monkeypatch torch (and the
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

import kgb_backend_ascend
from kgb_backend_ascend import AscendBackend
from kgb_core.backends import Backend
from kgb_core.operators import KNOWN_DTYPES
from kgb_core.plugins import load_registry

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
VENDOR_RUNTIMES = ('torch_npu',)


def test_registers_one_backend_named_ascend():
    registry = load_registry(entry_points=False, extra=[("kgb-backend-ascend", kgb_backend_ascend)])
    backend = registry.backend("ascend")
    assert isinstance(backend, AscendBackend) and isinstance(backend, Backend)
    assert backend.quirks.device_type == "npu"
    assert backend.timer_label == "ascend:npu-events+cache-flush"


@pytest.mark.skipif(kgb_backend_ascend.module_installed("torch_npu"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = AscendBackend().probe()
    assert not availability.available
    assert 'not available: needs torch_npu and an Ascend device' in availability.reason, availability.reason


def test_quirks_are_well_formed():
    quirks = AscendBackend.quirks
    assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
    assert all(reason.strip() for reason in quirks.skipped_dtypes.values())
    assert set(quirks.skipped_dtypes) == {'float64'}
    if quirks.max_num_warps is not None:
        assert quirks.max_num_warps & (quirks.max_num_warps - 1) == 0
    assert quirks.max_num_warps == None
    assert quirks.prompt_hints and all(hint.strip() for hint in quirks.prompt_hints)
    assert AscendBackend.flush_bytes > 0


def test_denied_operators_are_real_kgb_operators_with_reasons():
    quirks = AscendBackend.quirks
    registry = load_registry()
    for operator_id, reason in quirks.denied_operators.items():
        assert OPERATOR_ID.match(operator_id), operator_id
        assert "FlagGems" in reason or "triton-ascend" in reason, reason  # every entry is cited
        assert registry.operator(operator_id).id == operator_id
    assert set(quirks.denied_operators) == {'aten.sort'}


def test_registration_imports_neither_torch_nor_the_vendor_runtime(tmp_path):
    """Fresh interpreter; the vendor runtime modules are traps that raise if imported."""
    for name in VENDOR_RUNTIMES:
        (tmp_path / f"{name}.py").write_text("raise RuntimeError('imported at registration')\n")
    code = (
        "import sys, kgb_backend_ascend\n"
        "from kgb_core.plugins import load_registry\n"
        "r = load_registry(entry_points=False, extra=[('kgb-backend-ascend', kgb_backend_ascend)])\n"
        "assert r.names('backend') == ['ascend'], r.names('backend')\n"
        "heavy = ('torch', 'triton') + tuple(%r)\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n" % (VENDOR_RUNTIMES,)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


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
