"""The published KernelGenBench cuBLAS set: 50 ``cublas_v2.h`` routines (S/D/C/Z/H variants),
from ``CUBLAS_OPERATOR_NAMES`` (shared/inventory/kernelgenbench-facts.md, section 1c).

kgb names its cuBLAS specs exactly as cuBLAS names its C entry points, so this list is checked
against the source by name; the routines kgb adds beyond it (the rest of Level 1-3, cuBLASLt
epilogues, mixed precision, fp8, grouped GEMM) are the ones modern models lean on most.
"""

from __future__ import annotations

# Tag of the routines in the published set (the cuBLAS third of the 210-operator MS view).
PUBLISHED_TAG = "published"

PUBLISHED_CUBLAS: tuple[str, ...] = (
    "cublasCcopy_v2", "cublasCdotu_v2", "cublasCgemmStridedBatched",
    "cublasCgemmStridedBatched_64", "cublasCgemm_v2", "cublasCgemvBatched_64",
    "cublasCgemvStridedBatched", "cublasCgemv_v2", "cublasCgeru_v2", "cublasCsymm_v2",
    "cublasCsymv_v2", "cublasCsyrkEx", "cublasDasum_v2", "cublasDaxpy_v2", "cublasDcopy_v2",
    "cublasDgemmBatched", "cublasDgemmStridedBatched", "cublasDgemmStridedBatched_64",
    "cublasDgemvBatched", "cublasDgemvStridedBatched", "cublasDgemv_v2", "cublasDsbmv_v2",
    "cublasDsyr2_v2", "cublasDtrsmBatched", "cublasHgemmBatched", "cublasHgemmStridedBatched",
    "cublasSaxpy_v2", "cublasSdgmm", "cublasSdot_v2", "cublasSgeam", "cublasSgemmBatched_64",
    "cublasSgemmEx", "cublasSgemmStridedBatched", "cublasSgemm_v2", "cublasSgemvBatched",
    "cublasSgemvStridedBatched", "cublasSger_v2", "cublasSscal_v2", "cublasSsyrk_v2",
    "cublasStbmv_v2", "cublasStrsm_v2", "cublasStrsv_v2", "cublasZdotc_v2", "cublasZgemmBatched",
    "cublasZgemmStridedBatched", "cublasZgemvBatched", "cublasZgemvStridedBatched",
    "cublasZgerc_v2", "cublasZswap_v2", "cublasZtrsmBatched",
)
