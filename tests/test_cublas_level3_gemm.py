"""The cuBLAS level3 GEMM family (gemm, strided and pointer-array batched gemm, gemmEx, geam,
dgmm): every routine is registered with its tags, the references write only C's m x n
elements (padding and the gaps between strided batches stay), and plausible-but-wrong
kernels, each one targeted edit of a reference kernel, are rejected on their values."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import SMALL, InputContext
from kgb_core.plugins import load_registry

ROUTINES = {
    "cublasSgemm_v2", "cublasCgemm_v2", "cublasSgemmStridedBatched",
    "cublasDgemmStridedBatched", "cublasDgemmStridedBatched_64", "cublasCgemmStridedBatched",
    "cublasCgemmStridedBatched_64", "cublasZgemmStridedBatched", "cublasHgemmStridedBatched",
    "cublasDgemmBatched", "cublasHgemmBatched", "cublasSgemmBatched_64", "cublasZgemmBatched",
    "cublasSgemmEx", "cublasSgeam", "cublasSdgmm",
}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if "level3" in spec.tags}


def test_family_routines_are_registered_with_tags(specs):
    missing = sorted(ROUTINES - set(specs))
    assert not missing, f"missing level3 routines: {missing}"
    for name in ROUTINES:
        spec = specs[name]
        assert {"level3", "published"} <= spec.tags, (name, sorted(spec.tags))
        assert ("complex" in spec.tags) == (name[len("cublas")] in "CZ"), name
        assert sum(case.heldout for case in spec.cases) == 1, name
        assert any(case.tier == "large" for case in spec.cases), name
        source = spec.reference_kernel()
        assert "\ndef kernel(" in source or "\nkernel = " in source, name


def test_sgemm_cases_cover_every_transpose_pair_and_padding(specs):
    cases = specs["cublasSgemm_v2"].cases_in([SMALL])
    assert {c.params["transa"] + c.params["transb"] for c in cases} == {"NN", "NT", "TN", "TT"}
    assert all(c.params["ldc"] > c.params["m"] for c in cases)
    complex_pairs = {c.params["transa"] + c.params["transb"]
                     for c in specs["cublasCgemm_v2"].cases_in([SMALL])}
    assert any("C" in pair for pair in complex_pairs)
    strided = specs["cublasSgemmStridedBatched"].cases_in([SMALL])
    assert any(c.params["strideA"] == 0 for c in strided), "no broadcast-A case"


def _written_reals(spec, p) -> list[tuple[int, set[int]]]:
    """(argument index or (index, list position), the real indices the routine may write)."""
    reals = 2 if "complex" in spec.tags else 1
    m, n = p["m"], p["n"]
    ldc = p["ldc"]
    batches = [0] if "batch" not in p or "strideC" not in p else range(p["batch"])
    stride = p.get("strideC", 0)
    elements = {b * stride + i + j * ldc for b in batches for i in range(m) for j in range(n)}
    return {r * reals + part for r in elements for part in range(reals)}


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_writes_only_c_and_leaves_padding(specs, name):
    spec = specs[name]
    for case in spec.cases_in([SMALL]):
        dtype = spec.dtypes[0]
        inputs = list(spec.make_inputs(InputContext(case, dtype, 0, "cpu")))
        before = [[t.clone() for t in x] if isinstance(x, list)
                  else x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        spec.reference(*inputs)
        (out,) = spec.mutated_args
        for index, (now, old) in enumerate(zip(inputs, before)):
            if index == out:
                continue
            pairs = zip(now, old) if isinstance(now, list) else [(now, old)]
            for a, b in pairs:
                if isinstance(a, torch.Tensor):
                    assert torch.equal(a, b) or torch.equal(a.isnan(), b.isnan()), \
                        (name, case.name, index)
        written = _written_reals(spec, case.params)
        buffers = (zip(inputs[out], before[out]) if isinstance(inputs[out], list)
                   else [(inputs[out], before[out])])
        for now, old in buffers:
            untouched = torch.ones(now.numel(), dtype=torch.bool)
            untouched[sorted(written)] = False
            torch.testing.assert_close(now[untouched], old[untouched], rtol=0, atol=0,
                                       equal_nan=True, msg=f"{name} {case.name}: padding")
            assert not now[~untouched].isnan().any(), (name, case.name, "C left unwritten")


# (routine, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("cublasSgemm_v2", "lda_ignored_as_if_tightly_packed",
     "_strides(transa, lda, scale)", "_strides(transa, m if transa == 'N' else k, scale)"),
    ("cublasSgemm_v2", "beta_ignored",
     "out += beta_r * tl.load(c_ptrs", "out += tl.load(c_ptrs"),
    ("cublasSgemm_v2", "transb_ignored",
     "_strides(transb, ldb, scale)", "_strides('N', ldb, scale)"),
    # C written tightly packed (ldc taken as m): rows land in other columns' padding. (A
    # kernel that stores rows m..ldc-1 would also write past the buffer's end, which crashes
    # the interpreter instead of failing the comparison.)
    ("cublasSgemm_v2", "ldc_ignored_padding_overwritten",
     "stride_bn, ldc * scale", "stride_bn, m * scale"),
    ("cublasSgemm_v2", "c_read_when_beta_is_zero",
     "BETA_ZERO=beta == 0", "BETA_ZERO=False"),
    ("cublasCgemm_v2", "conjugate_missing_for_C",
     'CONJ_A=transa == "C" and IS_COMPLEX', "CONJ_A=False"),
    ("cublasSgemmStridedBatched", "stride_a_zero_taken_as_packed",
     "stride_a * scale", "(stride_a or lda * (k if transa == 'N' else m)) * scale"),
    ("cublasDgemmBatched", "pointer_arrays_ignored",
     "POINTER_ARRAYS=arrays is not None", "POINTER_ARRAYS=False"),
    ("cublasSdgmm", "incx_ignored", "x_ptr + offs_n * incx", "x_ptr + offs_n"),
    ("cublasSgeam", "alpha_and_beta_swapped",
     "float(alpha), float(beta)", "float(beta), float(alpha)"),
]


# Bugs whose kernel reads past the end of a buffer (a packed stride over a broadcast A): the
# interpreter may crash on the read before any value is compared, which rejects it too.
READS_PAST_THE_BUFFER = {"stride_a_zero_taken_as_packed"}


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert original in source, f"the reference kernel of {name} changed: update the edit"
    result = cpu_evaluator.evaluate(f"cublas.{name}", source.replace(original, wrong))
    rejected = {verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED}
    if bug in READS_PAST_THE_BUFFER:
        rejected |= {verdicts.CRASHED, verdicts.RUNTIME_ERROR}
    assert result.verdict in rejected, f"{bug}: {result.verdict}: {result.message}"
