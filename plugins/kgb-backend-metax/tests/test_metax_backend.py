"""kgb-backend-metax where no MetaX GPU is: the probe's logic, the quirks' shape, a cheap registration.

Nothing here claims a MetaX GPU ran anything. The "available" cases monkeypatch torch (and the
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

import kgb_backend_metax
from kgb_backend_metax import MetaxBackend
from kgb_core.backends import Backend
from kgb_core.operators import KNOWN_DTYPES
from kgb_core.plugins import load_registry

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
VENDOR_RUNTIMES = ()


def test_registers_one_backend_named_metax():
    registry = load_registry(entry_points=False, extra=[("kgb-backend-metax", kgb_backend_metax)])
    backend = registry.backend("metax")
    assert isinstance(backend, MetaxBackend) and isinstance(backend, Backend)
    assert backend.quirks.device_type == "cuda"
    assert backend.timer_label == "metax:cuda-events+cache-flush"


@pytest.mark.skipif(bool(os.environ.get("MACA_PATH")) or kgb_backend_metax.command_on_path("mx-smi"), reason="this machine has the vendor's stack")
def test_probe_here_says_unavailable_and_why():
    availability = MetaxBackend().probe()
    assert not availability.available
    assert 'no MetaX MACA stack found' in availability.reason, availability.reason


def test_quirks_are_well_formed():
    quirks = MetaxBackend.quirks
    assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
    assert all(reason.strip() for reason in quirks.skipped_dtypes.values())
    assert set(quirks.skipped_dtypes) == set()
    if quirks.max_num_warps is not None:
        assert quirks.max_num_warps & (quirks.max_num_warps - 1) == 0
    assert quirks.max_num_warps == 16
    assert quirks.prompt_hints and all(hint.strip() for hint in quirks.prompt_hints)
    assert MetaxBackend.flush_bytes > 0


def test_denied_operators_are_real_kgb_operators_with_reasons():
    quirks = MetaxBackend.quirks
    registry = load_registry()
    for operator_id, reason in quirks.denied_operators.items():
        assert OPERATOR_ID.match(operator_id), operator_id
        assert "FlagGems" in reason or "triton-ascend" in reason, reason  # every entry is cited
        assert registry.operator(operator_id).id == operator_id
    assert set(quirks.denied_operators) == {'vllm.concat_and_cache_mla', 'aten.scaled_dot_product_attention', 'vllm.topk_softmax'}


def test_registration_imports_neither_torch_nor_the_vendor_runtime(tmp_path):
    """Fresh interpreter; the vendor runtime modules are traps that raise if imported."""
    for name in VENDOR_RUNTIMES:
        (tmp_path / f"{name}.py").write_text("raise RuntimeError('imported at registration')\n")
    code = (
        "import sys, kgb_backend_metax\n"
        "from kgb_core.plugins import load_registry\n"
        "r = load_registry(entry_points=False, extra=[('kgb-backend-metax', kgb_backend_metax)])\n"
        "assert r.names('backend') == ['metax'], r.names('backend')\n"
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
