"""Tensor trees across the judge/runner boundary: what goes in comes out, and a lying
description is refused instead of costing the judge memory or reading past the file."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import exchange


def _trip(value, tmp_path, opaque=False):
    packed = exchange.pack(value, opaque=opaque)
    path = tmp_path / "blob.bin"
    packed.write(str(path))
    return exchange.unpack(packed.tree, exchange.read_file(str(path), 1 << 30), "cpu")


def test_values_strides_and_shared_storages_survive_the_trip(tmp_path):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    view = base[:, 1::2]  # strided, offset, shares base's storage
    expanded = torch.tensor([1.0, 2.0]).expand(3, 2)  # stride 0
    value = [base, view, (expanded, 3, 2.5, None, "x", torch.float16, 1 + 2j),
             torch.empty(0, 5), torch.tensor(True)]
    back = _trip(value, tmp_path)
    assert torch.equal(back[0], base) and torch.equal(back[1], view)
    assert back[1].stride() == view.stride() and back[1].storage_offset() == 1
    assert back[1].untyped_storage().data_ptr() == back[0].untyped_storage().data_ptr()
    assert back[2][0].stride() == (0, 1) and torch.equal(back[2][0], expanded)
    assert back[2][1:] == (3, 2.5, None, "x", torch.float16, 1 + 2j)
    assert back[3].shape == (0, 5) and back[4].item() is True


def test_a_host_tensor_among_device_ones_stays_on_the_host(tmp_path):
    """vLLM's LoRA kernels take a flag tensor on the CPU beside device tensors: it reaches the
    runner, and comes back to the judge, where it was (the device here is 'meta', which this
    machine has, standing in for a GPU)."""
    flag, data = torch.tensor([True]), torch.arange(4.0)
    packed = exchange.pack([data, flag])
    assert packed.tree["list"][1]["tensor"]["host"] is True
    del packed.tree["list"][0]["tensor"]["host"]  # as a device tensor is described
    path = tmp_path / "blob.bin"
    packed.write(str(path))
    back = exchange.unpack(packed.tree, exchange.read_file(str(path), 1 << 30), "meta")
    assert back[0].device.type == "meta" and back[0].shape == (4,)
    assert back[1].device.type == "cpu" and back[1].item() is True


def test_a_tensor_subclass_from_a_runner_travels_as_what_it_is_and_runs_no_code(tmp_path):
    reads = []

    class Lazy(torch.Tensor):  # computes its values when read, where no recorder looks
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            reads.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    value = torch.ones(3).as_subclass(Lazy)
    reads.clear()
    back = _trip([value], tmp_path, opaque=True)
    assert back == [exchange.Opaque("a torch.Tensor subclass (Lazy)")] and not reads
    with pytest.raises(exchange.ExchangeError):  # the judge never sends one
        exchange.pack([value])


def test_a_tensor_with_attributes_of_its_own_is_not_read_through_them(tmp_path):
    value = torch.ones(3)
    value.untyped_storage = lambda: torch.zeros(3).untyped_storage()  # shadows the method
    value.detach = lambda: torch.zeros(3)
    back = _trip([value], tmp_path, opaque=True)
    assert back[0].type_name.startswith("a torch.Tensor carrying attributes of its own")


def test_an_object_lying_about_its_class_runs_no_code(tmp_path):
    ran = []

    class Impostor:
        @property
        def __class__(self):  # isinstance(x, torch.Tensor) would ask this
            ran.append(True)
            return torch.Tensor

    assert _trip([Impostor()], tmp_path, opaque=True) == [exchange.Opaque("Impostor")]
    assert not ran


def test_named_tuples_and_number_subclasses_travel_as_plain_values(tmp_path):
    class Loud(float):
        def __float__(self):
            raise AssertionError("read through its own method")

        def __eq__(self, other):
            return True

    pair = torch.ones(2).max(dim=0)  # torch.return_types.max, a tuple subclass
    back = _trip([pair, Loud(2.5)], tmp_path, opaque=True)
    assert type(back[0]) is tuple and torch.equal(back[0][0], pair.values)
    assert type(back[1]) is float and back[1] == 2.5


def test_objects_travel_only_as_their_type_name_and_only_from_a_runner(tmp_path):
    with pytest.raises(exchange.ExchangeError):
        exchange.pack({"a": 1})
    assert _trip([{"a": 1}], tmp_path, opaque=True) == [exchange.Opaque("dict")]


def _tensor(at, nbytes, shape=(4,), stride=(1,), offset=0):
    return {"tensor": {"at": at, "nbytes": nbytes, "dtype": "float32", "shape": list(shape),
                       "stride": list(stride), "offset": offset}}


@pytest.mark.parametrize("tree, why", [
    ({"list": [_tensor(0, 16), _tensor(8, 16)]}, "overlap"),      # one region named twice
    ({"list": [_tensor(0, 16), _tensor(0, 32)]}, "two sizes"),
    (_tensor(0, 64), "outside"),                                   # past the 32 bytes given
    (_tensor(0, 16, shape=(8,)), "reaches past"),                  # a view past its storage
    (_tensor(0, 16, stride=(-1,)), "negative"),
    ({"eval": "x"}, "unknown tree node"),
])
def test_a_lying_description_is_refused(tree, why):
    blob = torch.zeros(32, dtype=torch.uint8)
    with pytest.raises(exchange.ExchangeError, match=why):
        exchange.unpack(tree, blob, "cpu")


def test_a_fifo_or_a_link_is_no_exchange_file(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(exchange.ExchangeError, match="not a plain file"):
        exchange.read_file(str(tmp_path / "fifo"), 1 << 20)
    (tmp_path / "real").write_bytes(b"x")
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(OSError):
        exchange.read_file(str(tmp_path / "link"), 1 << 20)
    with pytest.raises(exchange.ExchangeError, match="over the limit"):
        exchange.read_file(str(tmp_path / "real"), 0)


def _request_and_reply(tmp_path, inputs, reply_of):
    """The judge packs ``inputs``; the runner rebuilds them, makes its reply from them
    (``reply_of``), names the storages it left unchanged, and the judge rebuilds the reply."""
    request = exchange.pack(inputs)
    request.write(str(tmp_path / "in.bin"))
    received = []
    handed = exchange.unpack(request.tree, exchange.read_file(str(tmp_path / "in.bin"), 1 << 30),
                             "cpu", received=received)
    order = [storage for _, storage, _ in sorted(received, key=lambda r: r[0])]
    copies = [bytes(storage) for storage in order]
    reply = reply_of(handed)
    unchanged = {exchange.storage_key(s): k for k, (s, before) in enumerate(zip(order, copies))
                 if bytes(s) == before}
    packed = exchange.pack(reply, opaque=True, unchanged=unchanged)
    packed.write(str(tmp_path / "out.bin"))
    blob = exchange.read_file(str(tmp_path / "out.bin"), 1 << 30)
    return packed, blob, exchange.unpack(packed.tree, blob, "cpu", sent=request.sources)


def test_unchanged_inputs_are_named_not_sent_and_come_back_from_the_judges_copy(tmp_path):
    x, y = torch.randn(1000), torch.randn(7, 9)
    y_view = y[:, ::2]  # a view of an input: its storage is named once

    def reply(handed):
        a, b, b_view = handed
        return [a * 2, [a, b, b_view]]

    packed, blob, (out, after) = _request_and_reply(tmp_path, [x, y, y_view], reply)
    assert blob.numel() == 4000  # only the output's bytes crossed
    assert torch.equal(out, x * 2) and torch.equal(after[0], x) and torch.equal(after[1], y)
    assert torch.equal(after[2], y_view) and after[2].stride() == y_view.stride()
    assert after[1].untyped_storage().data_ptr() == after[2].untyped_storage().data_ptr()
    # the judge's rebuilt inputs are copies: writing them leaves what it sent alone
    after[0].zero_()
    assert not torch.equal(x, after[0])


def test_an_input_the_runner_changed_or_returned_crosses_as_it_is(tmp_path):
    x, y = torch.randn(64), torch.randn(64)

    def reply(handed):
        a, b = handed
        b.add_(1.0)  # written in place: its new bytes must come back
        return [a, [a, b]]  # the output is the first input itself, unchanged

    packed, blob, (out, (a, b)) = _request_and_reply(tmp_path, [x, y], reply)
    assert blob.numel() == 256 and torch.equal(b, y + 1.0)
    # output and input share one storage again: the judge sees the output aliasing its input
    assert out.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    assert torch.equal(out, x)


@pytest.mark.parametrize("node, error", [
    ({"input": 3}, "was not sent"),
    ({"input": 0, "nbytes": 512}, "holds 256 bytes, not 512"),
])
def test_a_reply_naming_an_input_it_was_not_sent_is_refused(node, error):
    sent = exchange.pack([torch.randn(64)]).sources
    tensor = {"nbytes": 256, "dtype": "float32", "shape": [64], "stride": [1], "offset": 0}
    tensor.update(node)
    with pytest.raises(exchange.ExchangeError, match=error):
        exchange.unpack({"tensor": tensor}, torch.empty(0, dtype=torch.uint8), "cpu", sent=sent)
    with pytest.raises(exchange.ExchangeError, match="was not sent"):
        exchange.unpack({"tensor": tensor}, torch.empty(0, dtype=torch.uint8), "cpu")


def test_a_problem_hosts_values_drawn_on_the_host_move_to_the_device(tmp_path):
    """A problem host (KernelBench's) draws every input on the CPU for the judge's device: they
    must arrive there, not stay on the host as an operator's flag tensor does (on the H100 every
    KernelBench answer got runtime_error, handed CPU tensors; 'meta' stands in for the GPU)."""
    from kgb_core.problem_server import read_values, write_values

    message = write_values(str(tmp_path), "values.bin", [torch.arange(4.0), torch.tensor([3])])
    back = read_values(str(tmp_path), message, "meta")
    assert [t.device.type for t in back] == ["meta", "meta"]
    assert not (tmp_path / "values.bin").exists()
