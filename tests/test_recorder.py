"""kgb_core.evaluation.recorder: the torch-op recorder and its suspension around launches.

Every Triton launch enters ``suspended()``: under the recorder it must hide the harness's own
torch ops (the interpreter's data movement) and restore the recorder afterwards; with no mode
active (timing) it must leave the dispatch stack alone, since popping and pushing it cost the
host about 5 us per launch, time a short kernel's timer could see.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest
import torch
from torch._C import _len_torch_dispatch_stack

from kgb_core.evaluation.recorder import Recording, StagedCopies, TorchOpRecorder, suspended


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


def test_a_ghost_replays_allocations_read_nan_or_minus_one_until_written():
    """Under ghost replay no launch writes, so an output must not read as a constant answer
    by chance (fresh device memory is zeros; aten.zeros' reference was once matched so)."""
    with Recording(poisoned=True):
        ints = torch.empty(5, dtype=torch.int32)
        halves = torch.empty_like(torch.ones(3, 3).t(), dtype=torch.float16)
        scalar = torch.empty(())
        written = torch.zeros(4)
    assert ints.tolist() == [-1] * 5
    assert bool(halves.isnan().all()) and bool(scalar.isnan())
    assert written.tolist() == [0.0] * 4  # what torch writes stays written
    with Recording():  # a checked call's allocations are left alone (no cost)
        plain = torch.full((4,), 2.0)
    assert plain.tolist() == [2.0] * 4


def test_staged_copies_keep_rearranged_copies_of_the_inputs_as_made():
    x = torch.arange(64.0).reshape(8, 8)
    staged = StagedCopies(budget=1 << 20, inputs=[x])
    with Recording(staged=staged):
        x.contiguous()  # no copy at all
        flat = x.clone()  # a copy of the inputs that rearranges nothing: not kept...
        transposed = flat.t().contiguous()  # ...but followed: this copy of it is kept
        transposed.zero_()  # kept as made, not as it ends
        buffer = torch.empty(8, 8)
        buffer.t().contiguous()  # what the call allocated holds no input's values
        out = torch.empty(8, 8)
        out.copy_(x.t())  # a copy into a destination counts too
    assert len(staged.kept) == 2 and staged.refused is None
    assert torch.equal(staged.kept[0], x.t()) and torch.equal(staged.kept[1], x.t())
    assert all("aten." in site for site in staged.sites)


def test_staged_copies_past_the_budget_are_refused_not_dropped():
    x = torch.ones(16, 16)
    staged = StagedCopies(budget=2 * x.numel() * 4, inputs=[x])
    with Recording(staged=staged):
        for _ in range(3):
            x.t().contiguous()
    assert len(staged.kept) == 2 and staged.refused and "aten.clone" in staged.refused


def test_a_copy_of_the_inputs_stays_theirs_through_a_resize():
    """A no-op ``resize_`` keeps a storage's values: it must not launder a copy of the inputs
    into one the call seems to have allocated."""
    x = torch.arange(64.0).reshape(8, 8)
    staged = StagedCopies(budget=1 << 20, inputs=[x])
    with Recording(staged=staged):
        copy = x.clone()
        copy.resize_(copy.shape)
        copy.t().contiguous()
    assert len(staged.kept) == 1 and torch.equal(staged.kept[0], x.t())


def test_a_buffer_assembled_in_pieces_is_kept_whole_as_the_next_launch_finds_it():
    """Each piece holds part of the answer; the buffer they fill holds all of it."""
    x = torch.arange(64.0).reshape(8, 8)
    staged = StagedCopies(budget=1 << 20, inputs=[x])
    with Recording(staged=staged):
        buffer = torch.empty(8, 8)
        buffer[:, :4] = x[:4].t()
        buffer[:, 4:] = x[4:].t()
    assert [tuple(kept.shape) for kept in staged.kept] == [(8, 4), (8, 4)]
    staged.at_launch("_copy")  # what LaunchCounter.note_launch does at a launch
    assert torch.equal(staged.kept[-1], x.t().reshape(-1)) and not staged.assembling
    assert "as _copy found it" in staged.sites[-1]
    staged.at_launch("_copy")  # nothing written since: nothing kept again
    assert len(staged.kept) == 3


def test_a_buffer_that_holds_an_input_in_order_counts_as_the_input():
    """A Triton kernel that copied an input moved no value of its own: torch's rearranging
    copy of its buffer is kept like a copy of the input. One that computed, or sorted (an
    honest sort kernel's values, before torch copies them into the output's layout), is not."""
    x = torch.randn(8, 8, generator=torch.Generator().manual_seed(0))
    written = {"copied": x.clone(),
               "nudged": x + 5e-5,  # inside aten.t's tolerance (atol 1e-4)
               "sorted": x.sort(dim=-1).values,
               "computed": torch.softmax(x, dim=0)}
    kept = {}
    for name, values in written.items():
        staged = StagedCopies(budget=1 << 20, inputs=[x])
        buffer = torch.empty(8, 8)
        buffer.copy_(values)  # the Triton kernel's write: before the recording sees anything
        with Recording(staged=staged):
            buffer.t().contiguous()
        kept[name] = len(staged.kept)
    assert kept == {"copied": 1, "nudged": 1, "sorted": 0, "computed": 0}


def test_the_judge_finds_the_answer_inside_a_wider_kept_buffer_only_where_it_is():
    """A kept buffer with room to spare holds the answer at some offset and row pitch; its
    readings (checker._readings) include that view, and none of an unrelated buffer's does."""
    from kgb_core.evaluation.checker import _holds, _readings
    from kgb_core.operators import Tolerance

    answer = torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    wider = torch.zeros(6, 7)
    wider[:, 1:6] = answer  # one column on each side
    exact = Tolerance(rtol=0.0, atol=0.0)
    assert any(_holds(r, answer, exact) for r in _readings(wider.reshape(-1), answer))
    unrelated = torch.randn(6, 7, generator=torch.Generator().manual_seed(2))
    assert not any(_holds(r, answer, exact) for r in _readings(unrelated, answer))
    huge = torch.zeros(6, 40)  # more than four times the answer: not searched
    huge[:, :5] = answer
    assert _readings(huge, answer) == []



def _moved(staged_calls, inputs):
    staged = StagedCopies(budget=1 << 20, inputs=inputs, moves_data=True)
    with Recording(staged=staged):
        staged_calls()
    return staged.moved


def test_for_an_operator_that_only_moves_data_staging_an_input_as_it_is_moves_nothing():
    x = torch.randn(16, 8).t()  # a transposed input, as a case hands it over

    def staging():
        x.contiguous()
        x.to(torch.float64)  # keeps x's layout
        x.to(torch.float64).contiguous()  # from a staging copy, as it is
        padded = torch.zeros(16, 32)
        padded[:8, :16] = x  # row-major with room to spare
        kept = torch.empty_like(x)
        kept.copy_(x)  # laid out as the input is
        flat = torch.empty(128)
        flat.copy_(torch.empty(128))  # a whole buffer copied flat

    assert _moved(staging, [x]) == []


@pytest.mark.parametrize("moving", [
    lambda x: x.t().contiguous(),  # the transpose itself
    lambda x: torch.empty(16, 8).t().copy_(x),  # into a transposed view: its memory moved
    lambda x: torch.empty_strided((8, 16), (1, 8)).copy_(x),  # laid out as the answer
    lambda x: x[:, :4].contiguous(),  # a piece of the input
    lambda x: torch.empty(2)[0].fill_(x[0, 0]),  # one element, by fill_
    lambda x: torch.empty(4, 4)[0].copy_(torch.empty(8)[:4]),  # a piece of another buffer
    lambda x: torch.ops.aten.lift_fresh_copy(x.expand(2, 8, 16)),
    lambda x: torch.empty(3, 8, 16).copy_(x),  # broadcast by copy_: an expand
    lambda x: torch.empty(4, 128).copy_(x.contiguous().reshape(128)),  # the same, flat
])
def test_for_an_operator_that_only_moves_data_any_other_copy_moves_it(moving):
    x = torch.randn(8, 16)
    moved = _moved(lambda: moving(x), [x])
    assert len(moved) >= 1 and moved[0].startswith("aten.") and "line" in moved[0]


def test_a_storage_allocated_again_holds_no_staged_input():
    """A staging copy's memory, freed and handed out again (the caching allocator's way),
    must not make what a kernel wrote there pass for the input."""
    x = torch.randn(16, 8).t()
    staged = StagedCopies(budget=1 << 20, inputs=[x], moves_data=True)
    with Recording(staged=staged):
        copy = x.to(torch.float64)  # laid out as x: staging
        staged.allocated(copy)  # as an allocation reusing its address would report it
        torch.empty(8, 16, dtype=torch.float64).copy_(copy)
    assert len(staged.moved) == 1


def test_for_a_moving_operator_zeroing_part_of_a_staged_input_keeps_the_buffer():
    """tril by zero_ on a staged copy: the buffer, as the next launch finds it, is the answer
    for the judge to find; zeroing a buffer of the call's own keeps nothing."""
    x = torch.arange(1.0, 65.0).reshape(8, 8)
    staged = StagedCopies(budget=1 << 20, inputs=[x], moves_data=True)
    with Recording(staged=staged):
        buffer = torch.empty(8, 8)
        buffer.copy_(x)
        for row in range(8):
            buffer[row, row + 1:].zero_()
        torch.empty(8, 8)[2:].zero_()
    staged.at_launch("_copy")
    assert staged.moved == [] and len(staged.kept) == 1
    assert torch.equal(staged.kept[0], torch.tril(x).reshape(-1))
    assert "zero_" in staged.sites[0]


def test_for_other_operators_no_copy_is_judged_a_move():
    x = torch.randn(16, 8)
    staged = StagedCopies(budget=1 << 20, inputs=[x])
    with Recording(staged=staged):
        x.t().contiguous()
        torch.empty(2)[0].fill_(x[0, 0])
    assert staged.moved == []


# -- TorchDynamo kept out of the op recorder, without importing it ------------------------------
_DYNAMO_SCRIPT = """
import json, sys
import torch
from kgb_core.evaluation.recorder import Recording, TorchOpRecorder
if sys.argv[1] == "imported":
    import torch._dynamo
with Recording():
    torch.empty(3).add_(1).tolist()
raw = TorchOpRecorder.__torch_dispatch__.__wrapped__
print(json.dumps({"dynamo": "torch._dynamo" in sys.modules,
                  "disabled_through_torch": hasattr(raw, "__dynamo_disable"),
                  "wrapped_once": not hasattr(raw, "__wrapped__")}))
"""


@pytest.mark.parametrize("dynamo", ["not imported", "imported"])
def test_the_op_recorder_keeps_dynamo_out_and_imports_it_only_if_something_did(dynamo):
    """torch wraps a dispatch mode's ``__torch_dispatch__`` in ``_disable_dynamo``, whose first
    call imports ``torch._dynamo``: 1 s of each runner template's start, and a dynamo context
    around every recorded op. Until something imports it nothing can be compiling, so the
    recorder runs bare; once it is imported, through torch's wrapper, as before."""
    done = subprocess.run([sys.executable, "-c", _DYNAMO_SCRIPT, dynamo], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    imported = dynamo == "imported"
    assert found == {"dynamo": imported, "disabled_through_torch": imported,
                     "wrapped_once": True}, found
