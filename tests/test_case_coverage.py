"""The case coverage audit: operators whose reference takes strided tensors are checked on a
strided one, so that a kernel that assumes a contiguous layout fails somewhere.

- ATen: some shown or held-out small case hands the operator a non-contiguous tensor (a
  transposed, sliced or channels-last view). ``KNOWN_GAPS`` lists the operators that do not,
  each with its reason; the test fails when one gets such a case and is still listed, and when
  a new operator has none.
- cuBLAS: buffers are 1-D by the API's contract; the stride is in the leading dimensions and
  increments, so some small case must pad a leading dimension past its rows or step an
  increment past 1.
- vLLM: not audited yet. Many of its ops require contiguous inputs by vLLM's own contract
  (``TORCH_CHECK(x.is_contiguous())``) and which do is a per-op reading of vLLM's source.
- Large cases (GPU only): not audited yet; a non-contiguous large case changes what a sweep on
  the H200 times and must first run there.
"""

from __future__ import annotations

import pytest

from kgb_core.evaluation.runner import tensors_in
from kgb_core.operators import SMALL, InputContext
from kgb_core.plugins import load_registry

REGISTRY = load_registry()
# as_strided reads its input's storage with the sizes and strides it is given, whatever the
# input's own layout, so a strided input tests nothing more there.
KNOWN_GAPS = {"aten.as_strided"}


def _strided_small_case(spec) -> bool | None:
    """Whether a small case hands over a non-contiguous tensor (None: it takes no tensor of
    more than one element, so layout cannot matter)."""
    any_tensor = False
    for case in spec.cases:
        if case.tier != SMALL:
            continue
        inputs = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
        tensors = [t for t in tensors_in(list(inputs)) if t.numel() > 1]
        any_tensor = any_tensor or bool(tensors)
        if any(not t.is_contiguous() for t in tensors):
            return True
    return False if any_tensor else None


ATEN = REGISTRY.operators(["aten"])


@pytest.mark.parametrize("spec", ATEN, ids=lambda s: s.id)
def test_aten_operators_are_checked_on_a_strided_input(spec):
    strided = _strided_small_case(spec)
    if spec.id in KNOWN_GAPS:
        assert strided is False, f"{spec.id} has a strided case now: take it off KNOWN_GAPS"
    else:
        assert strided is not False, f"{spec.id}: no small case has a non-contiguous input"


def _padded_or_stepped(params) -> bool:
    """An increment past 1, or a leading dimension past the rows it could be (the smallest
    of the case's m, n, k: a matrix's rows are one of them)."""
    if any(int(params.get(key, 1)) > 1 for key in ("incx", "incy")):
        return True
    dims = [int(params[key]) for key in ("m", "n", "k") if key in params]
    return bool(dims) and any(int(value) > min(dims) for key, value in params.items()
                              if key.startswith("ld"))


CUBLAS = [spec for spec in REGISTRY.operators(["cublas"])
          if spec.id != "cublas.cublasGemmGroupedBatchedEx"]  # per-group lds, inside "groups"


@pytest.mark.parametrize("spec", CUBLAS, ids=lambda s: s.id)
def test_cublas_routines_are_checked_with_padding_or_steps(spec):
    assert any(_padded_or_stepped(case.params) for case in spec.cases if case.tier == SMALL), \
        f"{spec.id}: no small case pads a leading dimension or steps an increment"
