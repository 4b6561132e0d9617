"""The cuBLAS Level 2 structured family (symv, syr, syr2, sbmv, gbmv, tbmv, trmv, trsv): every
routine is registered under its cuBLAS name with the family tag, its cases cover every flag
value, the references write only what cuBLAS writes, and plausible-but-wrong kernels, each one
targeted edit of a reference kernel, are rejected on their values."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import LARGE, SMALL, InputContext
from kgb_core.plugins import load_registry

ROUTINES = {
    "cublasCsymv_v2": "symv", "cublasSsymv_v2": "symv", "cublasDsbmv_v2": "sbmv",
    "cublasDsyr2_v2": "syr2", "cublasSsyr_v2": "syr", "cublasStbmv_v2": "tbmv",
    "cublasStrsv_v2": "trsv", "cublasStrmv_v2": "trmv", "cublasSgbmv_v2": "gbmv",
}
PUBLISHED = {"cublasCsymv_v2", "cublasDsbmv_v2", "cublasDsyr2_v2", "cublasStbmv_v2",
             "cublasStrsv_v2"}
# Flag values each routine's cases must cover between them.
FLAGS = {"uplo": {"U", "L"}, "trans": {"N", "T"}, "diag": {"N", "U"}}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if "level2" in spec.tags and spec.name in ROUTINES}


def test_family_routines_are_registered_with_their_tags(specs):
    assert sorted(specs) == sorted(ROUTINES)
    for name, operation in ROUTINES.items():
        tags = specs[name].tags
        assert {"level2", operation} <= tags, (name, sorted(tags))
        assert ("published" in tags) == (name in PUBLISHED), name
    assert "complex" in specs["cublasCsymv_v2"].tags


def test_cases_cover_every_flag_and_have_one_heldout(specs):
    for name, spec in specs.items():
        cases = spec.cases
        assert sum(case.heldout for case in cases) == 1, name
        assert all(case.tier == SMALL for case in cases if case.heldout), name
        assert 1 <= sum(case.tier == LARGE for case in cases) <= 3, name
        assert 3 <= sum(case.tier == SMALL and not case.heldout for case in cases) <= 5, name
        for flag, values in FLAGS.items():
            seen = {case.params[flag] for case in cases if flag in case.params}
            if seen:
                assert values <= seen, (name, flag, seen)
        small = [case for case in cases if case.tier == SMALL]
        assert any(case.params.get("incx", 1) > 1 for case in small), name
        lda_padded = [case.params["lda"] > case.params.get("n", 0) for case in small]
        if ROUTINES[name] in ("symv", "syr", "syr2", "trmv", "trsv"):
            assert any(lda_padded), f"{name}: no case has padding rows (lda > n)"


def _written_positions(spec, case) -> set[int]:
    """The buffer positions cuBLAS may write: a strided vector's elements, or A's triangle."""
    p = case.params
    operation = ROUTINES[spec.name]
    if operation in ("syr", "syr2"):
        n, lda = p["n"], p["lda"]
        upper = p["uplo"] == "U"
        return {i + j * lda for j in range(n) for i in range(n) if (i <= j) == upper or i == j}
    if operation == "gbmv":
        length = p["m"] if p["trans"] == "N" else p["n"]
        inc = p["incy"]
    elif operation in ("symv", "sbmv"):
        length, inc = p["n"], p["incy"]
    else:
        length, inc = p["n"], p["incx"]
    reals = 2 if "complex" in spec.tags else 1
    return {reals * i * inc + part for i in range(length) for part in range(reals)}


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_writes_only_what_cublas_writes(specs, name):
    spec = specs[name]
    for case in spec.cases_in([SMALL]):
        inputs = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
        before = [value.clone() if isinstance(value, torch.Tensor) else value
                  for value in inputs]
        assert spec.reference(*inputs) is None
        for index, (now, then) in enumerate(zip(inputs, before)):
            if not isinstance(now, torch.Tensor):
                continue
            same = (now == then) | (now.isnan() & then.isnan())
            changed = set((~same).nonzero().flatten().tolist())
            if index in spec.mutated_args:
                allowed = _written_positions(spec, case)
                assert changed <= allowed, (name, case.name, sorted(changed - allowed)[:5])
                assert changed, (name, case.name, "nothing written")
                assert not now[sorted(allowed)].isnan().any(), (name, case.name)
            else:
                assert not changed, (name, case.name, index)


# (routine, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("cublasSsymv_v2", "other_triangle_read",
     'UPPER=uplo == "U"', 'UPPER=uplo != "U"'),
    ("cublasCsymv_v2", "hermitian_instead_of_symmetric",
     "not Hermitian.\n            ai = tl.load(", "not Hermitian.\n            ai = -tl.load("),
    ("cublasDsbmv_v2", "band_lda_taken_as_k_plus_1",
     "A, x, y, n, k, lda, incx", "A, x, y, n, k, k + 1, incx"),
    ("cublasSgbmv_v2", "beta_ignored",
     "out += beta * tl.load(", "out += tl.load("),
    ("cublasSgbmv_v2", "y_read_when_beta_is_zero",
     "BETA_ZERO=beta == 0", "BETA_ZERO=False"),
    ("cublasStbmv_v2", "unit_diagonal_read",
     'UNIT=diag == "U"', "UNIT=False"),
    ("cublasStrmv_v2", "transpose_ignored",
     'TRANS=trans != "N"', "TRANS=False"),
    ("cublasStrsv_v2", "solve_direction_ignores_transpose",
     'forward = (uplo == "L") != transposed', 'forward = uplo == "L"'),
    ("cublasDsyr2_v2", "other_triangle_overwritten",
     "mask = row_ok[:, None] & col_ok[None, :] & tri", "mask = row_ok[:, None] & col_ok[None, :]"),
    ("cublasSsyr_v2", "incx_ignored",
     "A, x, n, lda, incx, alpha", "A, x, n, lda, 1, alpha"),
]


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert source.count(original) == 1, f"the reference kernel of {name} changed: update the edit"
    result = cpu_evaluator.evaluate(f"cublas.{name}", source.replace(original, wrong))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
