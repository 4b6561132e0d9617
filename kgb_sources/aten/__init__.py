"""The ``aten`` source: PyTorch ATen operators, each with a plain-PyTorch reference, shape
cases for the interpreter and for GPUs, roofline counts and a known-good Triton kernel.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.operators import OperatorSource, OperatorSpec

from kgb_sources.aten._build import SOURCE
from kgb_sources.aten.inventory import MC110, MC110_TAG

FAMILIES = ("pointwise", "reductions", "softmax", "normalization", "matmul", "indexing",
            "special", "activations", "pointwise_backward", "arithmetic", "comparison",
            "creation", "copies", "vector_norms", "losses", "conv", "pooling", "attention",
            "vision", "movement", "sorting")


def build_operators() -> list[OperatorSpec]:
    import dataclasses
    import importlib

    specs: list[OperatorSpec] = []
    for family in FAMILIES:
        module = importlib.import_module(f"kgb_sources.aten.{family}")
        specs.extend(module.operators())
    # The cross-chip tag lives in one list (inventory.py), not in each family, so the set's
    # size can be checked in one place.
    return [dataclasses.replace(spec, tags=spec.tags | {MC110_TAG}) if spec.name in MC110
            else spec for spec in specs]


@hookimpl
def kgb_register_sources(register):
    register(OperatorSource(
        name=SOURCE,
        description="PyTorch ATen operators with their exact ATen semantics",
        build=build_operators,
        cross_chip_tag=MC110_TAG,
    ))
