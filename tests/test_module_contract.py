"""Answers in other benchmarks' shapes called as kernel(...) (kgb_core/module_contract.py):
KernelBench's ModelNew with the judge's parameters and buffers, GPU MODE's custom_kernel."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from kgb_core.module_contract import ModuleContract, ModuleKernel, PackedContract


class LinearNorm(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.norm = nn.BatchNorm1d(features)  # training mode: writes its running statistics

    def forward(self, x):
        return self.norm(self.linear(x))


def _arguments(seed: int):
    torch.manual_seed(seed)
    model = LinearNorm(4)
    state = [value.clone() for value in model.state_dict().values()]
    return model, (torch.randn(3, 4), *state, 4)


@pytest.mark.parametrize("bind", [False, True], ids=["swapped-in", "bound"])
def test_a_prepared_call_runs_the_module_on_the_given_state_and_writes_its_buffers(bind):
    model, arguments = _arguments(0)
    contract = ModuleContract(inputs=1, state=tuple(model.state_dict()))
    kernel = ModuleKernel(LinearNorm, contract)
    prepared = kernel.prepare(arguments, bind=bind)
    assert (prepared.linear.weight.device.type == "meta") is not bind
    with torch.no_grad():
        expected = model(arguments[0])
        got = kernel(*arguments)
    torch.testing.assert_close(got, expected)
    running_mean = arguments[1 + contract.state.index("norm.running_mean")]
    torch.testing.assert_close(running_mean, model.norm.running_mean)  # written in place
    assert int(arguments[-2]) == 1  # num_batches_tracked, the judge's tensor
    kernel.release()  # the bound instance goes; the call still runs, swapped in
    with torch.no_grad():
        torch.testing.assert_close(kernel(*arguments), model(arguments[0]))


def test_unprepared_state_is_swapped_in_and_nothing_is_built_during_a_call():
    model, arguments = _arguments(1)
    contract = ModuleContract(inputs=1, state=tuple(model.state_dict()))
    kernel = ModuleKernel(LinearNorm, contract)
    kernel.prepare(arguments)
    other_model, other = _arguments(2)  # new tensors, same constructor arguments
    with torch.no_grad():
        torch.testing.assert_close(kernel(*other), other_model(other[0]))
    with pytest.raises(TypeError, match="not built"):
        kernel(*other[:-1], 5)  # constructor arguments never prepared


def test_a_module_must_hold_the_problems_names():
    model, arguments = _arguments(0)
    renamed = ModuleContract(inputs=1, state=tuple(f"x{name}" for name in model.state_dict()))
    with pytest.raises(TypeError, match="missing .*xlinear.weight.*not the problem's"):
        ModuleKernel(LinearNorm, renamed).prepare(arguments)


def test_a_packed_answer_gets_the_data_as_one_value():
    seen = []
    tuple_kernel = PackedContract(single=False).adapter({"custom_kernel": seen.append})
    single_kernel = PackedContract(single=True).adapter({"custom_kernel": seen.append})
    tuple_kernel(1, 2)
    single_kernel(3)
    assert seen == [(1, 2), 3]
    assert PackedContract().adapter({"kernel": print}) is None
