"""Checks every chip-backend plugin should pass, for its own test suite to inherit.

A vendor's tests subclass ``BackendPluginConformance`` in a class named ``Test...``, set the
class attributes, and get the checks that need no chip: it registers one backend of the right
class and device type, its quirks are well-formed data (known dtypes with reasons, warp limits
powers of two, prompt hints), each denied operator is a real kgb operator whose reason cites a
public source (one the plugin's tests name in ``cited_sources``, or a URL), and registering
imports neither torch, triton nor the vendor's runtime (the runtime modules are planted as
traps that raise on import). What the plugin's probe concludes
on a simulated vendor stack stays in the plugin's own tests: that logic is the vendor's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import ClassVar

OPERATOR_ID = re.compile(r"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*$")
URL = re.compile(r"https?://\S+")


class BackendPluginConformance:
    """Set these in the subclass; ``None`` for an expected value means "not checked"."""

    module: ClassVar[ModuleType]
    entry_name: ClassVar[str]           # the entry-point name, e.g. "kgb-backend-amd"
    backend_name: ClassVar[str]         # what --backend takes, e.g. "amd"
    backend_class: ClassVar[type]
    device_type: ClassVar[str]          # the torch device type, e.g. "cuda", "npu"
    vendor_runtimes: ClassVar[tuple[str, ...]] = ()
    expected_skipped_dtypes: ClassVar[set[str] | None] = None
    expected_max_num_warps: ClassVar[int | None | str] = "unchecked"
    expected_denied: ClassVar[set[str] | None] = None
    # Where the plugin's deny-list facts come from (a project, a vendor's documentation): each
    # denied operator's reason names one of them or gives a URL.
    cited_sources: ClassVar[tuple[str, ...]] = ()

    def _registry(self):  # noqa: ANN202
        from kgb_core.plugins import load_registry

        return load_registry(entry_points=False, extra=[(self.entry_name, self.module)])

    def test_registers_one_backend_of_its_class(self) -> None:
        from kgb_core.backends import Backend

        registry = self._registry()
        assert registry.names("backend") == [self.backend_name]
        backend = registry.backend(self.backend_name)
        assert isinstance(backend, self.backend_class) and isinstance(backend, Backend)
        assert backend.quirks.device_type == self.device_type

    def test_quirks_are_well_formed(self) -> None:
        from kgb_core.operators import KNOWN_DTYPES

        quirks = self.backend_class.profile.quirks
        assert set(quirks.skipped_dtypes) <= set(KNOWN_DTYPES)
        assert all(str(reason).strip() for reason in quirks.skipped_dtypes.values())
        if self.expected_skipped_dtypes is not None:
            assert set(quirks.skipped_dtypes) == self.expected_skipped_dtypes
        if quirks.max_num_warps is not None:
            assert quirks.max_num_warps & (quirks.max_num_warps - 1) == 0
        if self.expected_max_num_warps != "unchecked":
            assert quirks.max_num_warps == self.expected_max_num_warps
        assert all(hint.strip() for hint in quirks.prompt_hints)

    def test_denied_operators_are_real_operators_with_cited_reasons(self) -> None:
        from kgb_core.plugins import load_registry

        quirks = self.backend_class.profile.quirks
        registry = load_registry()
        for operator_id, reason in quirks.denied_operators.items():
            assert OPERATOR_ID.match(operator_id), operator_id
            assert URL.search(reason) or any(source in reason for source in self.cited_sources), (
                f"{operator_id}: the reason cites none of {self.cited_sources} and no URL: "
                f"{reason}")
            assert registry.operator(operator_id).id == operator_id
        if self.expected_denied is not None:
            assert set(quirks.denied_operators) == self.expected_denied

    def test_registration_imports_no_runtime(self, tmp_path: Path) -> None:
        """Neither torch, triton nor the vendor's runtime, in a fresh interpreter."""
        trap = "raise RuntimeError('imported at registration')\n"
        for name in self.vendor_runtimes:
            (tmp_path / f"{name}.py").write_text(trap)
        module = self.module.__name__
        code = (
            f"import sys, {module}\n"
            "from kgb_core.plugins import load_registry\n"
            f"r = load_registry(entry_points=False, extra=[({self.entry_name!r}, {module})])\n"
            f"assert r.names('backend') == [{self.backend_name!r}], r.names('backend')\n"
            f"heavy = ('torch', 'triton') + {tuple(self.vendor_runtimes)!r}\n"
            "print(sorted(m for m in heavy if m in sys.modules))\n"
        )
        path = [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                  if p]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=120, env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "[]"
