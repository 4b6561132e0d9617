"""The cuBLAS Level 1 family: every routine is registered under its C entry-point name with
its family and operation tags; the references write only the vector elements cuBLAS writes
(the gaps between strided elements stay as they were) and return what cuBLAS returns; and
plausible-but-wrong kernels, made from the reference kernels by one targeted edit each, are
rejected on their values."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import SMALL, InputContext, torch_dtype
from kgb_core.plugins import load_registry

from kgb_sources.cublas import inventory

# Routine -> operation tag.
ROUTINES = {
    "cublasCcopy_v2": "copy", "cublasDcopy_v2": "copy",
    "cublasZswap_v2": "swap", "cublasSswap_v2": "swap",
    "cublasSaxpy_v2": "axpy", "cublasDaxpy_v2": "axpy",
    "cublasSscal_v2": "scal", "cublasSrot_v2": "rot",
    "cublasSdot_v2": "dot", "cublasCdotu_v2": "dot", "cublasZdotc_v2": "dot",
    "cublasDasum_v2": "asum", "cublasSnrm2_v2": "nrm2",
    "cublasIsamax_v2": "iamax", "cublasIsamin_v2": "iamin",
}
COMPLEX = {"cublasCcopy_v2", "cublasZswap_v2", "cublasCdotu_v2", "cublasZdotc_v2"}
# Routines returning a scalar result -> (reals in it, its dtype; None: the routine's).
SCALAR_RESULTS = {
    "cublasSdot_v2": (1, None), "cublasCdotu_v2": (2, None), "cublasZdotc_v2": (2, None),
    "cublasDasum_v2": (1, None), "cublasSnrm2_v2": (1, None),
    "cublasIsamax_v2": (1, torch.int32), "cublasIsamin_v2": (1, torch.int32),
}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if "level1" in spec.tags}


def test_every_routine_is_registered_with_its_tags(specs):
    assert set(specs) == set(ROUTINES)
    for name, operation in ROUTINES.items():
        tags = specs[name].tags
        assert {"level1", operation} <= tags, (name, sorted(tags))
        assert ("complex" in tags) == (name in COMPLEX), name
        assert ("published" in tags) == (name in inventory.PUBLISHED_CUBLAS), name
    assert specs["cublasIsamax_v2"].dtypes == ("float32",)


def test_every_routine_has_one_heldout_small_case_and_large_cases(specs):
    for name, spec in specs.items():
        assert sum(case.heldout for case in spec.cases) == 1, name
        assert all(case.tier == SMALL for case in spec.cases if case.heldout), name
        large = [case.params["n"] for case in spec.cases if case.tier != SMALL]
        assert large and min(large) >= 1 << 22 and max(large) >= 1 << 24, name
        assert any(case.params["incx"] > 1 for case in spec.cases if case.tier == SMALL), name


def _touched(n, inc, is_complex):
    reals = 2 if is_complex else 1
    return {i * inc * reals + part for i in range(n) for part in range(reals)}


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_writes_only_the_strided_elements(specs, name):
    spec = specs[name]
    is_complex = name in COMPLEX
    names = spec.argument_names()
    for case in spec.cases_in([SMALL]):
        inputs = list(spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu")))
        before = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
        result = spec.reference(*inputs)
        n = case.params["n"]
        for index, (now, was) in enumerate(zip(inputs, before)):
            if not isinstance(now, torch.Tensor):
                continue
            if index not in spec.mutated_args:
                assert torch.equal(now, was), f"{name} {case.name}: wrote {names[index]}"
                continue
            inc = case.params["inc" + names[index]]
            touched = _touched(n, inc, is_complex)
            gaps = [k for k in range(now.numel()) if k not in touched]
            assert torch.equal(now[gaps], was[gaps]), f"{name} {case.name}: gap written"
            changed = (now != was).sum().item()
            assert changed >= len(touched) - 2, f"{name} {case.name}: {names[index]} unwritten"
        if name in SCALAR_RESULTS:
            reals, dtype = SCALAR_RESULTS[name]
            assert result.shape == (reals,), name
            assert result.dtype == (dtype or torch_dtype(spec.dtypes[0])), name
        else:
            assert result is None, name


def test_iamax_inputs_plant_a_tie_that_only_the_first_index_rule_breaks(specs):
    for name, largest in (("cublasIsamax_v2", True), ("cublasIsamin_v2", False)):
        spec = specs[name]
        case = spec.cases_in([SMALL])[0]
        n, x, incx = spec.make_inputs(InputContext(case, "float32", 0, "cpu"))
        magnitudes = x[::incx][:n].abs()
        extreme = magnitudes.max() if largest else magnitudes.min()
        ties = (magnitudes == extreme).nonzero().flatten().tolist()
        assert len(ties) == 2, name
        assert spec.reference(n, x, incx).item() == ties[0] + 1, name


# (routine, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("cublasSdot_v2", "incx_used_for_y",
     "y = tl.load(y_ptr + i * incy", "y = tl.load(y_ptr + i * incx"),
    ("cublasZdotc_v2", "conjugation_missing", "CONJ = True", "CONJ = False"),
    ("cublasCcopy_v2", "complex_elements_copied_as_reals", "\nWIDTH = 2\n", "\nWIDTH = 1\n"),
    ("cublasIsamax_v2", "last_index_on_ties",
     "tl.store(index_ptr + pid, tl.min(tl.where(best == top, first, n), axis=0))",
     "tl.store(index_ptr + pid, tl.max(tl.where(best == top, first, -1), axis=0))"),
    ("cublasIsamax_v2", "signed_values_compared", "key = tl.abs(x)", "key = x"),
    ("cublasIsamin_v2", "zero_based_index", "winner + 1, 0", "winner, 0"),
    ("cublasDasum_v2", "signed_sum", "acc += tl.abs(x)", "acc += x"),
    ("cublasSrot_v2", "rotation_sign_flipped", "c * y - s * x", "c * y + s * x"),
]


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert source.count(original) == 1, f"the reference kernel of {name} changed: update it"
    result = cpu_evaluator.evaluate(f"cublas.{name}", source.replace(original, wrong))
    # RUNTIME_ERROR: a bug that reads past a vector (incx used for y) is an out-of-bounds load,
    # caught by the CPU backend's bounds check (kgb_backends/interpreter_shims.py).
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED,
                              verdicts.RUNTIME_ERROR), f"{bug}: {result.verdict}: {result.message}"
