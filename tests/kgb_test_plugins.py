"""Plugins the test suite hands to evaluation workers through KGB_EXTRA_PLUGINS."""

from __future__ import annotations

from pathlib import Path

from kgb_backends.cpu import CpuInterpreterBackend
from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate
from kgb_core.methods import Method

KERNELS = Path(__file__).parent / "kernels"


class NoFloatsBackend(CpuInterpreterBackend):
    """A CPU backend whose quirks rule out every float dtype, so no case can run."""

    name = "cpu_nofloats"
    quirks = Quirks(device_type="cpu", skipped_dtypes={
        d: "test: ruled out" for d in ("float32", "float16", "bfloat16")})


@hookimpl
def kgb_register_backends(register):
    register(NoFloatsBackend())


class CorpusMethod(Method):
    """Hands out files from tests/kernels: option ``files`` maps an op id to a file name."""

    name = "corpus"
    description = "test corpus of deliberately bad kernels"

    def option_keys(self) -> frozenset[str]:
        return frozenset({"files"})

    def generate(self, op, quirks, ctx):
        filename = ctx.options["files"].get(op.id)
        if filename is None:
            return []
        return [Candidate(source=(KERNELS / filename).read_text(), origin=filename)]


@hookimpl
def kgb_register_methods(register):
    register(CorpusMethod())
