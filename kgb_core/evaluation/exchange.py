"""Tensor trees across the judge/runner boundary: raw bytes in a file, a JSON description beside.

The judge hands the runner its inputs, and the runner hands back its outputs, as data only: each
distinct storage's bytes, concatenated in one file of a shared-memory folder, and a JSON tree
that names, for every tensor, its storage, dtype, shape, strides and offset. No pickle crosses
(a pickle is code), and no object the other side could patch: what comes out of ``unpack`` is
plain tensors built on fresh storage, whatever class or trick produced the bytes.

Views that shared a storage share one again after the trip (an input passed twice, a slice of
another input), so aliasing a kernel could rely on is kept. Python scalars, strings, ``None``,
dtypes, lists and tuples travel in the JSON itself.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

import torch

# Each storage starts at a multiple of this in the file, so a typed view of it is aligned.
_ALIGN = 64


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _dtype(name: str) -> torch.dtype:
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise ExchangeError(f"unknown dtype {name!r}")
    return value


@dataclass(frozen=True)
class Opaque:
    """What a runner returned that is no tensor, number or tuple of them: only its type's name."""

    type_name: str


class ExchangeError(ValueError):
    """The description or the file does not make a valid tensor tree (a broken or lying side)."""


@dataclass
class Packed:
    """A tensor tree as a JSON-able description and the bytes of its storages, in order."""

    tree: Any
    storages: list[bytes | memoryview] = field(default_factory=list)

    def write(self, path: str, dir_fd: int | None = None) -> int:
        """Write the storages to ``path`` (created anew; relative to ``dir_fd`` when given);
        returns the bytes written."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                     dir_fd=dir_fd)
        written = 0
        with os.fdopen(fd, "wb") as out:
            for data in self.storages:
                padding = -written % _ALIGN
                out.write(b"\0" * padding)
                out.write(data)
                written += padding + len(data)
        return written


def _storage_bytes(tensor: torch.Tensor) -> memoryview:
    """The whole storage of ``tensor`` as host bytes (a device storage is copied to the host)."""
    storage = tensor.untyped_storage()
    raw = torch.empty(0, dtype=torch.uint8, device=tensor.device)
    raw.set_(storage, 0, (storage.nbytes(),), (1,))
    if raw.device.type != "cpu":
        raw = raw.cpu()
    return memoryview(raw.numpy()).cast("B")


def pack(value: Any, *, opaque: bool = False) -> Packed:
    """Describe ``value``; each distinct storage of its tensors is copied once. With ``opaque``
    (a runner packing what a candidate returned), an object of any other type travels as its
    type's name, which the judge then finds is not the output it expected."""
    packed = Packed(tree=None)
    offsets: dict[tuple[str, int], int] = {}
    position = [0]

    def visit(item: Any) -> Any:
        if isinstance(item, torch.Tensor):
            tensor = item.detach()
            if type(tensor) is not torch.Tensor:  # a subclass travels as its plain data
                tensor = tensor.as_subclass(torch.Tensor)
            storage = tensor.untyped_storage()
            key = (str(tensor.device), storage.data_ptr())
            if not storage.nbytes():  # nothing to carry: rebuilt as an empty storage
                offsets[key] = 0
            elif key not in offsets:
                data = _storage_bytes(tensor)
                position[0] += -position[0] % _ALIGN
                offsets[key] = position[0]
                packed.storages.append(data)
                position[0] += len(data)
            return {"tensor": {"at": offsets[key], "nbytes": storage.nbytes(),
                               "dtype": _dtype_name(tensor.dtype),
                               "shape": list(tensor.shape), "stride": list(tensor.stride()),
                               "offset": tensor.storage_offset()}}
        if isinstance(item, (list, tuple)):
            return {"list" if isinstance(item, list) else "tuple": [visit(v) for v in item]}
        if isinstance(item, torch.dtype):
            return {"dtype": _dtype_name(item)}
        if isinstance(item, torch.device):
            return {"device": str(item)}
        if item is None or isinstance(item, (bool, int, float, str)):
            return {"value": item}
        if isinstance(item, complex):
            return {"complex": [item.real, item.imag]}
        if opaque:
            return {"opaque": type(item).__name__[:80]}
        raise ExchangeError(f"a {type(item).__name__} cannot cross to the other process; "
                            f"kernel(...) takes and returns tensors, numbers and their tuples")

    packed.tree = visit(value)
    return packed


def read_file(path: str, limit_bytes: int, dir_fd: int | None = None) -> torch.Tensor:
    """The file's bytes as a uint8 tensor; refused when it is no plain file or is too large."""
    # No link followed, and no FIFO or device opened for long: the folder is the runner's.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ExchangeError(f"{os.path.basename(path)} is not a plain file")
        size = info.st_size
        if size > limit_bytes:
            raise ExchangeError(f"{os.path.basename(path)} holds {size} bytes, over the limit "
                                f"of {limit_bytes}")
        data = bytearray(size)
        view, done = memoryview(data), 0
        while done < size:
            got = os.readv(fd, [view[done:]])
            if got == 0:
                break
            done += got
    finally:
        os.close(fd)
    if done != size:
        raise ExchangeError(f"{os.path.basename(path)} ended early")
    return torch.frombuffer(data, dtype=torch.uint8) if size else torch.empty(0, dtype=torch.uint8)


def unpack(tree: Any, blob: torch.Tensor, device: str | torch.device) -> Any:
    """Rebuild the tree described by ``tree`` from ``blob`` (see ``read_file``) on ``device``."""
    storages: dict[int, tuple[int, torch.UntypedStorage]] = {}

    def storage_at(at: int, nbytes: int) -> torch.UntypedStorage:
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=device).untyped_storage()
        if at in storages:
            if storages[at][0] != nbytes:
                raise ExchangeError(f"two sizes given for the storage at {at}")
            return storages[at][1]
        if at < 0 or nbytes < 0 or at + nbytes > blob.numel():
            raise ExchangeError(f"a storage of {nbytes} bytes at {at} lies outside the "
                                f"{blob.numel()} bytes handed over")
        # Storages may not overlap: then what is rebuilt never exceeds the bytes handed over
        # (a description naming one region many times would make copies without end).
        for other, (size, _) in storages.items():
            if at < other + size and other < at + nbytes:
                raise ExchangeError(f"the storages at {at} and {other} overlap")
        storages[at] = (nbytes, blob[at:at + nbytes].to(device, copy=True).untyped_storage())
        return storages[at][1]

    def visit(node: Any) -> Any:
        if not isinstance(node, dict) or len(node) != 1:
            raise ExchangeError(f"malformed tree node {str(node)[:80]}")
        (kind, body), = node.items()
        if kind == "tensor":
            return _tensor(body)
        if kind in ("list", "tuple"):
            if not isinstance(body, list):
                raise ExchangeError(f"malformed {kind}")
            items = [visit(v) for v in body]
            return items if kind == "list" else tuple(items)
        if kind == "dtype":
            return _dtype(body)
        if kind == "device":
            return torch.device(body)
        if kind == "value":
            if body is None or isinstance(body, (bool, int, float, str)):
                return body
            raise ExchangeError("malformed value")
        if kind == "complex":
            try:
                return complex(float(body[0]), float(body[1]))
            except (TypeError, ValueError, IndexError):
                raise ExchangeError("malformed complex") from None
        if kind == "opaque":
            return Opaque(str(body))
        raise ExchangeError(f"unknown tree node {kind!r}")

    def _tensor(body: dict[str, Any]) -> torch.Tensor:
        try:
            dtype = _dtype(body["dtype"])
            shape, stride = [int(s) for s in body["shape"]], [int(s) for s in body["stride"]]
            offset, nbytes, at = int(body["offset"]), int(body["nbytes"]), int(body["at"])
        except (KeyError, TypeError, ValueError) as error:
            raise ExchangeError(f"malformed tensor description: {error}") from None
        if len(shape) != len(stride) or min(shape + [0]) < 0 or min(stride + [0]) < 0 or offset < 0:
            raise ExchangeError("a tensor description with a negative size, stride or offset")
        itemsize = torch.empty(0, dtype=dtype).element_size()
        extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
        if extent * itemsize > nbytes:
            raise ExchangeError(f"a tensor of shape {shape} reaches past its storage's "
                                f"{nbytes} bytes")
        tensor = torch.empty(0, dtype=dtype, device=device)
        tensor.set_(storage_at(at, nbytes), offset, shape, stride)
        return tensor

    return visit(tree)
