"""The cuBLAS Level 3 structured family (symm, syrk, syrkEx, syr2k, trmm, trsm, trsmBatched):
every routine is registered under its cuBLAS name with its tags, its cases cover every flag
value, the references write only what cuBLAS writes and agree with an independent oracle
(element loops, or the residual of the solve), the reference kernels pass through kgb's
evaluator, and plausible-but-wrong kernels, each one targeted edit of a reference kernel, are
rejected on their values."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import LARGE, SMALL, InputContext
from kgb_core.plugins import load_registry

ROUTINES = {
    "cublasSsymm_v2": "symm", "cublasCsymm_v2": "symm", "cublasSsyrk_v2": "syrk",
    "cublasCsyrkEx": "syrk", "cublasSsyr2k_v2": "syr2k", "cublasStrmm_v2": "trmm",
    "cublasStrsm_v2": "trsm", "cublasDtrsmBatched": "trsm", "cublasZtrsmBatched": "trsm",
}
PUBLISHED = {"cublasCsymm_v2", "cublasCsyrkEx", "cublasSsyrk_v2", "cublasStrsm_v2",
             "cublasDtrsmBatched", "cublasZtrsmBatched"}
# Flag values each routine's cases must cover between them (where the routine takes the flag).
FLAGS = {"side": {"L", "R"}, "uplo": {"U", "L"}, "trans": {"N", "T"}, "diag": {"N", "U"}}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if spec.name in ROUTINES}


def _complex(spec) -> bool:
    return "complex" in spec.tags


def test_family_routines_are_registered_with_their_tags(specs):
    assert sorted(specs) == sorted(ROUTINES)
    for name, operation in ROUTINES.items():
        tags = specs[name].tags
        assert {"level3", "blas3", operation} <= tags, (name, sorted(tags))
        assert ("published" in tags) == (name in PUBLISHED), name
        assert ("complex" in tags) == (name[len("cublas")] in "CZ"), name
        assert ("batched" in tags) == name.endswith("Batched"), name
        source = specs[name].reference_kernel()
        assert "\ndef kernel(" in source or "\nkernel = " in source, name
    assert specs["cublasCsyrkEx"].dtypes == ("float32",)
    assert specs["cublasZtrsmBatched"].dtypes == ("float64",)


def _stored_rows(p, key: str) -> int:
    """Rows of the matrix a leading dimension belongs to, as stored."""
    if "side" in p:  # symm, trmm, trsm: A is square of A's order, B and C are m x n
        return (p["m"] if p["side"] == "L" else p["n"]) if key == "lda" else p["m"]
    if key == "ldc":
        return p["n"]
    return p["n"] if p["trans"] == "N" else p["k"]


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
        for key in ("lda", "ldb", "ldc"):
            if key in small[0].params:
                assert any(c.params[key] > _stored_rows(c.params, key) for c in small), \
                    f"{name}: no case pads {key}"
        if "beta" in small[0].params:
            assert any(c.params["beta"] in (0, 0.0, (0.0, 0.0)) for c in small), name
    z_trans = {c.params["trans"] for c in specs["cublasZtrsmBatched"].cases}
    assert "C" in z_trans, "no conjugate-transpose case for the complex solve"
    assert all(c.params["trans"] != "C" for c in specs["cublasCsyrkEx"].cases)


def test_trsm_cases_solve_in_both_directions_on_both_sides(specs):
    """Forward when the matrix actually solved against is lower triangular: op(A) for side L,
    op(A)^T for side R. A kernel with one direction wrong must meet a case that shows it."""
    for name in ("cublasStrsm_v2", "cublasDtrsmBatched", "cublasZtrsmBatched"):
        seen = set()
        for case in specs[name].cases_in([SMALL]):
            p = case.params
            op_lower = (p["uplo"] == "L") == (p["trans"] == "N")
            seen.add((p["side"], op_lower if p["side"] == "L" else not op_lower))
        assert len(seen) == 4, (name, sorted(seen))


# -- what the references write, and an independent oracle ------------------------------------
def _elements(buf, is_complex):
    return torch.view_as_complex(buf.view(-1, 2)) if is_complex else buf


def _dense(buf, rows, cols, ld, is_complex):
    """An independent read of a column-major buffer, element by element, in fp64/complex128."""
    flat = _elements(buf, is_complex).to(torch.complex128)
    return torch.stack([torch.stack([flat[i + j * ld] for j in range(cols)])
                        for i in range(rows)]) if rows and cols else torch.zeros(rows, cols)


def _written(spec, p) -> tuple[set[int], int]:
    """(element positions cuBLAS may write in the written buffer, which argument it is)."""
    operation = ROUTINES[spec.name]
    (index,) = spec.mutated_args
    if operation in ("syrk", "syr2k"):
        n, ldc, upper = p["n"], p["ldc"], p["uplo"] == "U"
        return {i + j * ldc for j in range(n) for i in range(n) if (i <= j) == upper
                or i == j}, index
    ld = p["ldb"] if operation == "trsm" else p["ldc"]
    return {i + j * ld for j in range(p["n"]) for i in range(p["m"])}, index


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_writes_only_what_cublas_writes(specs, name):
    spec = specs[name]
    is_complex = _complex(spec)
    for case in spec.cases_in([SMALL]):
        inputs = list(spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu")))
        before = [[t.clone() for t in v] if isinstance(v, list)
                  else v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
        assert spec.reference(*inputs) is None
        allowed, out = _written(spec, case.params)
        for index, (now, then) in enumerate(zip(inputs, before)):
            pairs = list(zip(now, then)) if isinstance(now, list) else [(now, then)]
            for buf, old in pairs:
                if not isinstance(buf, torch.Tensor):
                    continue
                now_e, old_e = _elements(buf, is_complex), _elements(old, is_complex)
                same = (now_e == old_e) | (now_e.isnan() & old_e.isnan())
                changed = set((~same).nonzero().flatten().tolist())
                if index == out:
                    assert changed <= allowed, (name, case.name, sorted(changed - allowed)[:5])
                    assert changed, (name, case.name, "nothing written")
                    assert not now_e[sorted(allowed)].isnan().any(), (name, case.name)
                else:
                    assert not changed, (name, case.name, index)


def _oracle_check(spec, case) -> None:
    """The reference's result against the routine's definition, read element by element."""
    is_complex = _complex(spec)
    p = case.params
    inputs = list(spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu")))
    before = [[t.clone() for t in v] if isinstance(v, list)
              else v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
    spec.reference(*inputs)
    operation = ROUTINES[spec.name]
    alpha = complex(p["alpha"][0], p["alpha"][1]) if is_complex else p["alpha"]
    if operation == "symm":
        order = p["m"] if p["side"] == "L" else p["n"]
        a = _dense(before[5], order, order, p["lda"], is_complex)
        stored = [[(i <= j) == (p["uplo"] == "U") or i == j for j in range(order)]
                  for i in range(order)]
        s = torch.stack([torch.stack([a[i, j] if stored[i][j] else a[j, i]
                                      for j in range(order)]) for i in range(order)])
        b = _dense(before[7], p["m"], p["n"], p["ldb"], is_complex)
        c = _dense(before[10], p["m"], p["n"], p["ldc"], is_complex).nan_to_num(0.0)
        beta = complex(*p["beta"]) if is_complex else p["beta"]
        expected = alpha * (s @ b if p["side"] == "L" else b @ s) + beta * c
        actual = _dense(inputs[10], p["m"], p["n"], p["ldc"], is_complex)
    elif operation in ("syrk", "syr2k"):
        n, k = p["n"], p["k"]
        rows, cols = (n, k) if p["trans"] == "N" else (k, n)
        a_index = 5
        a = _dense(before[a_index], rows, cols, p["lda"], is_complex)
        opa = a if p["trans"] == "N" else a.T
        if operation == "syr2k":
            opb = _dense(before[7], rows, cols, p["ldb"], is_complex)
            opb = opb if p["trans"] == "N" else opb.T
            product = opa @ opb.T + opb @ opa.T
        else:
            product = opa @ opa.T
        (out,) = spec.mutated_args
        c = _dense(before[out], n, n, p["ldc"], is_complex)
        beta = complex(*p["beta"]) if is_complex else p["beta"]
        full = alpha * product + beta * c.nan_to_num(0.0)
        upper = p["uplo"] == "U"
        expected = torch.stack([torch.stack([full[i, j] if (i <= j) == upper or i == j
                                             else c[i, j] for j in range(n)])
                                for i in range(n)])
        actual = _dense(inputs[out], n, n, p["ldc"], is_complex)
    else:
        order = p["m"] if p["side"] == "L" else p["n"]
        batched = spec.name.endswith("Batched")
        a_bufs = before[7] if batched else [before[7]]
        solved = inputs[9] if batched else [inputs[9 if operation == "trsm" else 11]]
        rhs = before[9] if batched else [before[9]]
        for a_buf, x_buf, b_buf in zip(a_bufs, solved, rhs):
            a = _dense(a_buf, order, order, p["lda"], is_complex)
            t = torch.zeros(order, order, dtype=torch.complex128)
            for i in range(order):
                for j in range(order):
                    if i == j:
                        t[i, j] = 1.0 if p["diag"] == "U" else a[i, j]
                    elif (i < j) == (p["uplo"] == "U"):
                        t[i, j] = a[i, j]
            opt = t if p["trans"] == "N" else t.T if p["trans"] == "T" else t.T.conj()
            b = _dense(b_buf, p["m"], p["n"], p["ldb"], is_complex)
            if operation == "trmm":
                expected = alpha * (opt @ b if p["side"] == "L" else b @ opt)
                actual = _dense(x_buf, p["m"], p["n"], p["ldc"], is_complex)
            else:  # the residual of the solve: op(A) X (or X op(A)) against alpha * B
                x = _dense(x_buf, p["m"], p["n"], p["ldb"], is_complex)
                expected = alpha * b
                actual = opt @ x if p["side"] == "L" else x @ opt
            torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
        return
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_matches_the_routine_read_element_by_element(specs, name):
    spec = specs[name]
    # The two smallest shown cases keep the element loops quick.
    cases = sorted(spec.cases_in([SMALL]), key=lambda c: c.params["m" if "m" in c.params
                                                                    else "n"])[:2]
    for case in cases:
        _oracle_check(spec, case)


# -- the evaluator: wrong kernels are rejected (reference kernels: reference_sweep.py) --
# (routine, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("cublasSsymm_v2", "other_triangle_read", 'UPPER=uplo == "U"', 'UPPER=uplo != "U"'),
    ("cublasSsymm_v2", "beta_ignored", "out += beta_r * tl.load(c_ptrs",
     "out += tl.load(c_ptrs"),
    ("cublasCsymm_v2", "hermitian_instead_of_symmetric",
     "si = tl.load(a_ptr + 2 * idx + 1, mask=s_mask, other=0.0)",
     "si = tl.where(stored, 1.0, -1.0) * tl.load(a_ptr + 2 * idx + 1, mask=s_mask, "
     "other=0.0)"),
    ("cublasSsyrk_v2", "other_triangle_of_c_overwritten",
     "c_mask = row_ok[:, None] & col_ok[None, :] & tri",
     "c_mask = row_ok[:, None] & col_ok[None, :]"),
    ("cublasSsyrk_v2", "c_read_when_beta_is_zero", "BETA_ZERO=beta == 0", "BETA_ZERO=False"),
    ("cublasCsyrkEx", "conjugated_like_herk",
     "yi = tl.load(y_ptr + y_idx + 1, mask=y_mask, other=0.0)",
     "yi = -tl.load(y_ptr + y_idx + 1, mask=y_mask, other=0.0)"),
    ("cublasSsyr2k_v2", "ldb_taken_as_lda", "_strides(trans, ldb)", "_strides(trans, lda)"),
    ("cublasSsyr2k_v2", "second_product_missing", "if RANK_2K:", "if False:"),
    ("cublasStrmm_v2", "unit_diagonal_read", 'UNIT=diag == "U"', "UNIT=False"),
    ("cublasStrmm_v2", "transpose_ignored",
     'stride_r, stride_c = (1, lda) if trans == "N" else (lda, 1)',
     "stride_r, stride_c = 1, lda"),
    ("cublasStrsm_v2", "solve_direction_ignores_transpose",
     'op_upper = (uplo == "U") == (trans == "N")', 'op_upper = uplo == "U"'),
    ("cublasStrsm_v2", "alpha_ignored", "acc_r = alpha_r * br\n", "acc_r = br\n"),
    ("cublasDtrsmBatched", "first_pointer_for_every_batch", "x[:batchCount]",
     "x[:1] * batchCount"),
    ("cublasZtrsmBatched", "conjugate_missing_for_C", 'conj = IS_COMPLEX and trans == "C"',
     "conj = False"),
]


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert source.count(original) == 1, f"the reference kernel of {name} changed: update it"
    result = cpu_evaluator.evaluate(f"cublas.{name}", source.replace(original, wrong))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
