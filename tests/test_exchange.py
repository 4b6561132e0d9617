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


def test_a_tensor_subclass_travels_as_plain_data(tmp_path):
    class Lying(torch.Tensor):
        pass

    value = torch.ones(3).as_subclass(Lying)
    back = _trip(value, tmp_path)
    assert type(back) is torch.Tensor and torch.equal(back, torch.ones(3))


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
