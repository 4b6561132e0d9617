"""The ``aten`` source: PyTorch ATen operators, each with a plain-PyTorch reference, shape
cases for the interpreter and for GPUs, roofline counts and a known-good Triton kernel.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.source_kit import family_source

from kgb_sources.aten._build import SOURCE
from kgb_sources.aten.inventory import MC110, MC110_TAG

# Each family is a module with ``operators() -> list[OperatorSpec]``.
FAMILIES = ("pointwise", "reductions", "softmax", "normalization", "matmul", "indexing",
            "special", "activations", "pointwise_backward", "arithmetic", "comparison",
            "creation", "copies", "vector_norms", "losses", "conv", "pooling", "attention",
            "vision", "movement", "sorting")


@hookimpl
def kgb_register_sources(register):
    register(family_source(
        name=SOURCE,
        description="PyTorch ATen operators with their exact ATen semantics",
        package="kgb_sources.aten", families=FAMILIES,
        # The cross-chip tag lives in one list (inventory.py), not in each family, so the
        # set's size can be checked in one place.
        tagged={MC110_TAG: MC110}, cross_chip_tag=MC110_TAG,
    ))
