"""The cuBLAS Level 2 general-matrix family (gemv, pointer-array and strided batched gemv,
ger/geru/gerc): every routine is registered under its cuBLAS name with its tags, its cases cover
every trans letter, padding, strides and beta == 0, the references write only what cuBLAS
writes (the strided y elements, A's m x n matrix), the reference kernels pass the evaluator,
and plausible-but-wrong kernels, each one targeted edit of a reference kernel, are rejected on
their values."""

from __future__ import annotations

import re

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import LARGE, SMALL, InputContext
from kgb_core.plugins import load_registry

# Routine -> (operation tag, kind).
ROUTINES = {
    "cublasSgemv_v2": ("gemv", "gemv"), "cublasDgemv_v2": ("gemv", "gemv"),
    "cublasCgemv_v2": ("gemv", "gemv"),
    "cublasSgemvBatched": ("gemv", "batched"), "cublasDgemvBatched": ("gemv", "batched"),
    "cublasZgemvBatched": ("gemv", "batched"), "cublasCgemvBatched_64": ("gemv", "batched"),
    "cublasSgemvStridedBatched": ("gemv", "strided"),
    "cublasDgemvStridedBatched": ("gemv", "strided"),
    "cublasCgemvStridedBatched": ("gemv", "strided"),
    "cublasZgemvStridedBatched": ("gemv", "strided"),
    "cublasSger_v2": ("ger", "ger"), "cublasCgeru_v2": ("geru", "ger"),
    "cublasZgerc_v2": ("gerc", "ger"),
}
# Every routine above but Sgemv is in the published KernelGenBench set.
UNPUBLISHED = {"cublasSgemv_v2"}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if spec.name in ROUTINES}


def test_family_routines_are_registered_with_their_tags(specs):
    assert sorted(specs) == sorted(ROUTINES)
    for name, (operation, kind) in ROUTINES.items():
        spec = specs[name]
        assert {"level2", operation} <= spec.tags, (name, sorted(spec.tags))
        assert ("published" in spec.tags) == (name not in UNPUBLISHED), name
        assert ("complex" in spec.tags) == (name[len("cublas")] in "CZ"), name
        assert ("batched" in spec.tags) == (kind in ("batched", "strided")), name
        source = spec.reference_kernel()
        assert "\ndef kernel(" in source or "\nkernel = " in source, name
        assert not re.search(r"__[A-Z]+__", source), f"{name}: a template marker left"
    assert "_64 API" in specs["cublasCgemvBatched_64"].description
    assert "cublasCgemvBatched," in specs["cublasCgemvBatched_64"].description


def test_cases_cover_every_flag_and_have_one_heldout(specs):
    for name, spec in specs.items():
        kind = ROUTINES[name][1]
        cases = spec.cases
        assert sum(case.heldout for case in cases) == 1, name
        assert all(case.tier == SMALL for case in cases if case.heldout), name
        assert 1 <= sum(case.tier == LARGE for case in cases) <= 3, name
        assert 3 <= sum(case.tier == SMALL and not case.heldout for case in cases) <= 5, name
        small = spec.cases_in([SMALL])
        assert all(case.params["lda"] > case.params["m"] for case in small), \
            f"{name}: a small case without padding rows"
        assert any(case.params["incx"] > 1 for case in small), name
        assert any(case.params["incy"] > 1 for case in small), name
        if kind == "ger":
            continue
        assert {case.params["trans"] for case in small} == {"N", "T", "C"}, name
        assert any(case.params["beta"] in (0, 0.0, (0.0, 0.0)) for case in small), name
        if kind == "strided":
            assert any(case.params["strideA"] == 0 for case in small), f"{name}: no shared A"
            assert any(case.params["batch"] > 1 for case in small), name


def _lengths(p):
    return (p["n"], p["m"]) if p["trans"] == "N" else (p["m"], p["n"])


def _written_reals(name, spec, p) -> set[int]:
    """The real indices of the written buffer (one list entry, for pointer arrays) cuBLAS may
    write: y's strided elements in each strided batch, or A's m x n matrix for ger."""
    reals = 2 if "complex" in spec.tags else 1
    if ROUTINES[name][1] == "ger":
        elements = {i + j * p["lda"] for j in range(p["n"]) for i in range(p["m"])}
    else:
        batches = range(p["batch"]) if ROUTINES[name][1] == "strided" else [0]
        stride = p.get("stridey", 0)
        elements = {b * stride + i * p["incy"] for b in batches
                    for i in range(_lengths(p)[1])}
    return {e * reals + part for e in elements for part in range(reals)}


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_writes_only_what_cublas_writes(specs, name):
    spec = specs[name]
    (out,) = spec.mutated_args
    for case in spec.cases_in([SMALL]):
        inputs = list(spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu")))
        before = [[t.clone() for t in x] if isinstance(x, list)
                  else x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        assert spec.reference(*inputs) is None
        for index, (now, old) in enumerate(zip(inputs, before)):
            if index == out:
                continue
            for a, b in (zip(now, old) if isinstance(now, list) else [(now, old)]):
                if isinstance(a, torch.Tensor):
                    torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True,
                                               msg=f"{name} {case.name}: argument {index}")
        written = _written_reals(name, spec, case.params)
        buffers = (list(zip(inputs[out], before[out])) if isinstance(inputs[out], list)
                   else [(inputs[out], before[out])])
        if isinstance(inputs[out], list):
            assert len(buffers) == case.params["batch"], name
        for now, old in buffers:
            untouched = torch.ones(now.numel(), dtype=torch.bool)
            untouched[sorted(written)] = False
            torch.testing.assert_close(now[untouched], old[untouched], rtol=0, atol=0,
                                       equal_nan=True, msg=f"{name} {case.name}: gaps")
            assert not now[~untouched].isnan().any(), (name, case.name, "output unwritten")
            assert not torch.equal(now[~untouched], old[~untouched]), (name, case.name)


def test_beta_zero_cases_fill_y_with_nan(specs):
    spec = specs["cublasCgemv_v2"]
    (case,) = [c for c in spec.cases_in([SMALL]) if c.params["beta"] == (0.0, 0.0)]
    inputs = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
    assert inputs[8] == 0 and inputs[9].isnan().all()


# (routine, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("cublasCgemv_v2", "conjugate_missing_for_C",
     'CONJ=trans == "C" and IS_COMPLEX', "CONJ=False"),
    ("cublasCgemv_v2", "plain_transpose_conjugated",
     'CONJ=trans == "C" and IS_COMPLEX', 'CONJ=trans != "N" and IS_COMPLEX'),
    # A real routine must take "C" as "T"; this one takes it as "N".
    ("cublasSgemv_v2", "real_C_taken_as_no_transpose",
     'if trans == "N" else (lda * scale, scale)',
     'if trans in ("N", "C") else (lda * scale, scale)'),
    ("cublasSgemv_v2", "beta_ignored",
     "out += beta_r * tl.load(y_ptrs", "out += tl.load(y_ptrs"),
    ("cublasSgemv_v2", "y_read_when_beta_is_zero", "BETA_ZERO=beta == 0", "BETA_ZERO=False"),
    ("cublasSgemv_v2", "incy_ignored_gaps_overwritten",
     "incx * scale, incy * scale,", "incx * scale, scale,"),
    ("cublasDgemv_v2", "lda_ignored_as_if_tightly_packed",
     '(scale, lda * scale) if trans == "N" else (lda * scale, scale)',
     '(scale, m * scale) if trans == "N" else (m * scale, scale)'),
    ("cublasSgemvStridedBatched", "stridey_taken_as_packed",
     "stride_y * scale", "(1 + (out_len - 1) * incy) * scale"),
    ("cublasCgemvBatched_64", "pointer_arrays_ignored",
     "POINTER_ARRAYS=arrays is not None", "POINTER_ARRAYS=False"),
    ("cublasSger_v2", "lda_ignored_as_if_tightly_packed",
     "m, n, scale, lda * scale,", "m, n, scale, m * scale,"),
    ("cublasCgeru_v2", "y_conjugated_as_in_gerc", "CONJ_Y=CONJUGATE_Y", "CONJ_Y=True"),
    ("cublasZgerc_v2", "conjugate_of_y_missing", "CONJ_Y=CONJUGATE_Y", "CONJ_Y=False"),
]


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert source.count(original) == 1, f"the reference kernel of {name} changed: update the edit"
    result = cpu_evaluator.evaluate(f"cublas.{name}", source.replace(original, wrong))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
