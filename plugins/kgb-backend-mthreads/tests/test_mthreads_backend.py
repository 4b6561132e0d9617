"""kgb-backend-mthreads where no Moore Threads GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a Moore Threads GPU ran anything. The "available" cases monkeypatch torch (and the
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

import kgb_backend_mthreads
from kgb_backend_mthreads import MthreadsBackend
from kgb_core.backends import Backend
from kgb_core.operators import KNOWN_DTYPES
from kgb_core.plugins import load_registry

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
VENDOR_RUNTIMES = ('torch_musa',)


def test_registers_one_backend_named_mthreads():
    registry = load_registry(entry_points=False, extra=[("kgb-backend-mthreads", kgb_backend_mthreads)])
    backend = registry.backend("mthreads")
    assert isinstance(backend, MthreadsBackend) and isinstance(backend, Backend)
    assert backend.quirks.device_type == "musa"
    assert backend.timer_label == "mthreads:musa-events+cache-flush"


@pytest.mark.skipif(kgb_backend_mthreads.module_installed("torch_musa"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = MthreadsBackend().probe()
    assert not availability.available
    assert 'not available: needs torch_musa and a Moore Threads GPU' in availability.reason, availability.reason


def test_quirks_are_well_formed():
    quirks = MthreadsBackend.quirks
    assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
    assert all(reason.strip() for reason in quirks.skipped_dtypes.values())
    assert set(quirks.skipped_dtypes) == {'float64'}
    if quirks.max_num_warps is not None:
        assert quirks.max_num_warps & (quirks.max_num_warps - 1) == 0
    assert quirks.max_num_warps == None
    assert quirks.prompt_hints and all(hint.strip() for hint in quirks.prompt_hints)
    assert MthreadsBackend.flush_bytes > 0


def test_denied_operators_are_real_kgb_operators_with_reasons():
    quirks = MthreadsBackend.quirks
    registry = load_registry()
    for operator_id, reason in quirks.denied_operators.items():
        assert OPERATOR_ID.match(operator_id), operator_id
        assert "FlagGems" in reason or "triton-ascend" in reason, reason  # every entry is cited
        assert registry.operator(operator_id).id == operator_id
    assert set(quirks.denied_operators) == set()


def test_registration_imports_neither_torch_nor_the_vendor_runtime(tmp_path):
    """Fresh interpreter; the vendor runtime modules are traps that raise if imported."""
    for name in VENDOR_RUNTIMES:
        (tmp_path / f"{name}.py").write_text("raise RuntimeError('imported at registration')\n")
    code = (
        "import sys, kgb_backend_mthreads\n"
        "from kgb_core.plugins import load_registry\n"
        "r = load_registry(entry_points=False, extra=[('kgb-backend-mthreads', kgb_backend_mthreads)])\n"
        "assert r.names('backend') == ['mthreads'], r.names('backend')\n"
        "heavy = ('torch', 'triton') + tuple(%r)\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n" % (VENDOR_RUNTIMES,)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


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
