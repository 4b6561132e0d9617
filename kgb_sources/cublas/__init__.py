"""The ``cublas`` source: cuBLAS and cuBLASLt routines with cuBLAS's own semantics.

Matrices are column-major buffers with explicit leading dimensions, ``op(A)`` transposes,
``alpha``/``beta`` scaling and ``uplo``/``diag``/``side`` flags, exactly as the C API takes
them (``kgb_sources/cublas/_build.py`` holds the conventions every family shares). Complex
routines (C, Z) pass real and imaginary parts interleaved in a real tensor, since Triton has no
complex type. The references are PyTorch, which calls cuBLAS/cuBLASLt on NVIDIA, so there the
timed baseline is cuBLAS itself; where a routine has no direct PyTorch call, its reference is
composed from ones that do, and its description says so.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.source_kit import family_source

from kgb_sources.cublas._build import SOURCE
from kgb_sources.cublas.inventory import PUBLISHED_CUBLAS, PUBLISHED_TAG

# Each family is a module with ``operators() -> list[OperatorSpec]``.
FAMILIES: tuple[str, ...] = ("level1", "level2_structured", "level2_gemv", "level3_gemm",
                             "level3_structured", "lt_matmul")


@hookimpl
def kgb_register_sources(register):
    register(family_source(
        name=SOURCE,
        description="cuBLAS and cuBLASLt routines with cuBLAS's semantics: column-major "
                    "buffers, leading dimensions, transposes, alpha/beta",
        package="kgb_sources.cublas", families=FAMILIES,
        tagged={PUBLISHED_TAG: PUBLISHED_CUBLAS},
    ))
