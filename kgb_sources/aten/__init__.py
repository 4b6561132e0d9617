"""The ``aten`` source: PyTorch ATen operators, each with a plain-PyTorch reference, shape
cases for the interpreter and for GPUs, roofline counts and a known-good Triton kernel.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.operators import OperatorSource, OperatorSpec

from kgb_sources.aten._build import SOURCE

FAMILIES = ("pointwise", "reductions", "softmax", "normalization", "matmul", "indexing")


def build_operators() -> list[OperatorSpec]:
    import importlib

    specs: list[OperatorSpec] = []
    for family in FAMILIES:
        module = importlib.import_module(f"kgb_sources.aten.{family}")
        specs.extend(module.operators())
    return specs


@hookimpl
def kgb_register_sources(register):
    register(OperatorSource(
        name=SOURCE,
        description="PyTorch ATen operators with their exact ATen semantics",
        build=build_operators,
    ))
