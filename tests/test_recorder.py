"""kgb_core.evaluation.recorder: the torch-op recorder and its suspension around launches.

Every Triton launch enters ``suspended()``: under the recorder it must hide the harness's own
torch ops (the interpreter's data movement) and restore the recorder afterwards; with no mode
active (timing) it must leave the dispatch stack alone, since popping and pushing it cost the
host about 5 us per launch, time a short kernel's timer could see.
"""

from __future__ import annotations

import contextlib

import torch
from torch._C import _len_torch_dispatch_stack

from kgb_core.evaluation.recorder import TorchOpRecorder, suspended


def test_ops_inside_suspended_are_not_recorded_and_the_recorder_comes_back():
    x = torch.ones(4)
    with TorchOpRecorder() as recorder:
        with suspended():  # the mode stays on the stack, skipped by torch's C++ guards
            torch.exp(x)  # the harness's own op, e.g. the interpreter copying a block
        assert _len_torch_dispatch_stack() == 1
        torch.sin(x)  # the candidate's op, after the launch
    assert recorder.forbidden == ["aten.sin"]


def test_suspended_is_a_no_op_when_no_mode_is_active():
    assert _len_torch_dispatch_stack() == 0
    context = suspended()
    assert isinstance(context, contextlib.nullcontext)
    with context:
        assert _len_torch_dispatch_stack() == 0


def test_a_forbidden_op_names_the_line_that_called_it():
    x = torch.ones(4)
    with TorchOpRecorder() as recorder:
        torch.cos(x)  # the candidate's own line, as a runner reports it
    assert recorder.forbidden == ["aten.cos"]
    assert recorder.sites == ["line " + str(_line_of("torch.cos(x)  # the candidate")) +
                              ": torch.cos(x)  # the candidate's own line, as a runner reports it"]


def _line_of(text):
    with open(__file__) as handle:
        return next(number for number, line in enumerate(handle, 1) if text in line)
