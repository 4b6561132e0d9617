"""What a Triton launch may be given: Triton calls methods of its arguments inside the launch,
where the recorders are suspended, so only values whose methods are torch's or Triton's own
pass (``kgb_core.evaluation.launches.LaunchArguments``)."""

from __future__ import annotations

import numpy
import pytest
import torch
import triton
import triton.language as tl

from kgb_core.evaluation.launches import LaunchArguments


@triton.jit
def _activation(x):
    return x


class _HasDataPtr:
    def data_ptr(self):
        return 0


class _Subclass(torch.Tensor):
    pass


def test_what_published_kernels_pass_is_allowed():
    check = LaunchArguments()
    x = torch.ones(4)
    allowed = (x, torch.nn.Parameter(torch.ones(2)), 3, 2.5, True, None, "relu", torch.float16,
               tl.float32, tl.constexpr(8), (x, x), [x, 1], x.shape, numpy.int64(7),
               _activation)
    assert check.problem(allowed, {"num_warps": 4, "grid": (1, 2)}) is None


@pytest.mark.parametrize("make,said", [
    (lambda: _HasDataPtr(), "_HasDataPtr, not a tensor"),
    (lambda: torch.ones(2).as_subclass(_Subclass), "_Subclass, not a tensor"),
    (lambda: (torch.ones(2), _HasDataPtr()), "_HasDataPtr, not a tensor"),
])
def test_an_object_of_the_candidates_own_is_refused(make, said):
    assert said in LaunchArguments().problem((make(),), {})


def test_a_tensor_with_an_attribute_of_its_own_is_refused():
    x = torch.ones(2)
    x.untyped_storage = lambda: None
    assert "attributes of its own (untyped_storage)" in LaunchArguments().problem((), {"x": x})


def test_a_subclass_made_after_the_check_is_no_triton_dtype():
    """The tables are taken once: a class the candidate derives later is not among them."""
    check = LaunchArguments()
    late = type("late_dtype", (tl.dtype,), {})
    assert "late_dtype" in check.problem((object.__new__(late),), {})
