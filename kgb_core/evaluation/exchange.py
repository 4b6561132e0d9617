"""Tensor trees across the judge/runner boundary: raw bytes in shared memory, a JSON description.

The judge hands the runner its inputs, and the runner hands back its outputs, as data only: each
distinct storage's bytes, laid out one after another in the runner's shared memory
(``kgb_core.evaluation.arena``; a problem host's values go through a file instead), and a JSON
tree that names, for every tensor, its storage, dtype, shape, strides and offset. No pickle
crosses (a pickle is code), and no object the other side could patch: what comes out of
``unpack`` is plain tensors built on fresh storage, whatever class or trick produced the bytes.

Views that shared a storage share one again after the trip (an input passed twice, a slice of
another input), so aliasing a kernel could rely on is kept. Python scalars, strings, ``None``,
dtypes, lists and tuples travel in the JSON itself.

A reply names an input storage it hands back unchanged (``{"input": k}``, the k-th storage of
the request) instead of carrying its bytes: a large case's inputs then cross once, not twice.
The judge rebuilds it from its own copy of what it sent; a runner that lies about it only hides
a change it made to its own copy of the inputs, which it could hide as well by sending the
original bytes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from kgb_core.evaluation.arena import Arena

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
    """A tensor tree as a JSON-able description, and the storages its bytes are to be read from
    (``sources``, each at its offset in ``offsets``; ``nbytes`` in all). A reply may name the
    k-th storage of a request instead of sending it back."""

    tree: Any
    sources: list[torch.UntypedStorage] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    nbytes: int = 0

    def place(self, arena: "Arena") -> int:
        """Copy each storage into ``arena`` (``kgb_core.evaluation.arena``) at its offset, a
        device storage straight off the device; returns the bytes the description covers."""
        region = arena.for_writing(self.nbytes)
        for storage, at in zip(self.sources, self.offsets):
            region[at:at + storage.nbytes()].copy_(storage_bytes(storage))
        return self.nbytes

    def write(self, path: str, dir_fd: int | None = None) -> int:
        """Write the storages to ``path`` (created anew; relative to ``dir_fd`` when given), laid
        out as in an arena; returns the bytes written."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                     dir_fd=dir_fd)
        written = 0
        with os.fdopen(fd, "wb") as out:
            for storage, at in zip(self.sources, self.offsets):
                out.write(b"\0" * (at - written))
                out.write(_storage_bytes(storage))
                written = at + storage.nbytes()
        return written


# Read through torch.Tensor's own methods, unbound, never through the object: an attribute the
# candidate set on an output tensor shadows the class's method on that object, not here.
_detach = torch.Tensor.detach
_untyped_storage = torch.Tensor.untyped_storage
_stride = torch.Tensor.stride
_storage_offset = torch.Tensor.storage_offset
_tensor_dict = vars
_type_name = type.__dict__["__name__"].__get__  # a metaclass's own __name__ runs no code here


def storage_key(storage: torch.UntypedStorage) -> tuple[str, int]:
    """What identifies a storage within one process: its device and its address."""
    return (str(storage.device), storage.data_ptr())


def storage_bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    """The whole storage as a uint8 tensor on its device: a view, no copy."""
    view = torch.empty(0, dtype=torch.uint8, device=storage.device)
    view.set_(storage, 0, (storage.nbytes(),), (1,))
    return view


def _storage_bytes(storage: torch.UntypedStorage) -> memoryview:
    """The whole storage as host bytes (a device storage is copied to the host)."""
    raw = storage_bytes(storage)
    if raw.device.type != "cpu":
        raw = raw.cpu()
    return memoryview(raw.numpy()).cast("B")


def _not_plain(item: Any) -> str | None:
    """Why a value that claims to be a tensor is not a plain one, or None when it is."""
    cls = type(item)
    if cls is not torch.Tensor:
        return f"a torch.Tensor subclass ({_type_name(cls)[:60]})"
    own = _tensor_dict(item)
    if own:
        return (f"a torch.Tensor carrying attributes of its own "
                f"({', '.join(sorted(str(k)[:30] for k in own)[:4])})")
    return None


def pack(value: Any, *, opaque: bool = False,
         unchanged: dict[tuple[str, int], int] | None = None) -> Packed:
    """Describe ``value``; each distinct storage of its tensors is copied once.

    Types are taken exactly (``type(x) is torch.Tensor``, not ``isinstance``, which a
    ``__class__`` property can answer) and read through unbound methods of their classes, so no
    code of the object's own runs here. With ``opaque`` (a runner packing what a candidate
    returned), anything else travels as a description of what it is, which the judge then finds
    is not the output it expected: a tensor subclass (one can compute its values lazily, when
    read, where no recorder looks), a tensor with attributes of its own, any other object.
    A storage in ``unchanged`` (its ``storage_key``) is named by the index given there, its
    bytes left out. No byte is copied here: ``Packed.place`` or ``Packed.write`` does that."""
    packed = Packed(tree=None)
    unchanged = unchanged or {}
    offsets: dict[tuple[str, int], int] = {}
    position = [0]

    def tensor_node(item: torch.Tensor) -> dict[str, Any]:
        tensor = _detach(item)
        storage = _untyped_storage(tensor)
        key = storage_key(storage)
        described = {"nbytes": storage.nbytes(), "dtype": _dtype_name(tensor.dtype),
                     "shape": list(tensor.shape), "stride": list(_stride(tensor)),
                     "offset": _storage_offset(tensor)}
        if storage.device.type == "cpu":  # a host tensor among device ones stays on the host
            described["host"] = True
        if storage.nbytes() and key in unchanged:
            return {"tensor": {"input": unchanged[key], **described}}
        if not storage.nbytes():  # nothing to carry: rebuilt as an empty storage
            offsets[key] = 0
        elif key not in offsets:
            position[0] += -position[0] % _ALIGN
            offsets[key] = position[0]
            packed.sources.append(storage)
            packed.offsets.append(position[0])
            position[0] += storage.nbytes()
        return {"tensor": {"at": offsets[key], **described}}

    def refuse(description: str) -> dict[str, Any]:
        if opaque:
            return {"opaque": description}
        raise ExchangeError(f"{description} cannot cross to the other process; kernel(...) "
                            f"takes and returns tensors, numbers and their tuples")

    def visit(item: Any) -> Any:
        cls = type(item)
        if issubclass(cls, torch.Tensor):  # not isinstance: it asks the object's __class__
            why = _not_plain(item)
            return refuse(why) if why else tensor_node(item)
        if cls is list or cls is tuple:
            return {cls.__name__: [visit(v) for v in item]}
        if issubclass(cls, tuple):  # a named tuple: its elements, read as a tuple's
            return {"tuple": [visit(tuple.__getitem__(item, i))
                              for i in range(tuple.__len__(item))]}
        if issubclass(cls, list):
            return {"list": [visit(list.__getitem__(item, i)) for i in range(list.__len__(item))]}
        if cls is torch.dtype:
            return {"dtype": _dtype_name(item)}
        if cls is torch.device:
            return {"device": str(item)}
        if item is None or cls in (bool, int, float, str):
            return {"value": item}
        if cls is complex:
            return {"complex": [item.real, item.imag]}
        # A subclass of a number or a string (numpy's float64 is a float): its value, read as
        # its base type's, so that an overridden __eq__ or __float__ never runs.
        for base, read in ((int, int.__index__), (float, float.__float__), (str, str.__str__)):
            if issubclass(cls, base):
                return {"value": read(item)}
        return refuse(_type_name(cls)[:80])

    packed.tree = visit(value)
    packed.nbytes = position[0]
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
        # Read straight into a tensor's memory, never zeroed first (a bytearray of a large
        # case's 64 MB was zeroed, then overwritten).
        data = torch.empty(size, dtype=torch.uint8)
        view, done = memoryview(data.numpy()).cast("B"), 0
        while done < size:
            got = os.readv(fd, [view[done:]])
            if got == 0:
                break
            done += got
    finally:
        os.close(fd)
    if done != size:
        raise ExchangeError(f"{os.path.basename(path)} ended early")
    return data


def unpack(tree: Any, blob: torch.Tensor, device: str | torch.device, *,
           sent: list[torch.UntypedStorage] | None = None,
           received: list[tuple[int, torch.UntypedStorage, torch.Tensor]] | None = None,
           keep_host: bool = True) -> Any:
    """Rebuild the tree described by ``tree`` from ``blob`` (an arena's bytes, or
    ``read_file``'s) on ``device``, every storage copied out of it;
    a tensor described as a host one (an operator's flag tensor kept on the CPU, as vLLM's LoRA
    kernels take it) on the host, unless ``keep_host`` is off (a side that made every value on
    the host for this one to move, as a problem host draws its inputs).

    ``sent``: the storages of the request this replies to (``Packed.sources``), which the tree
    may name (``{"input": k}``); each is copied, once however often it is named. ``received``
    collects (offset, storage, the blob's bytes it was rebuilt from) of every storage rebuilt
    from the blob, for the side that may later name them."""
    storages: dict[int, tuple[int, torch.UntypedStorage]] = {}
    copies: dict[int, torch.UntypedStorage] = {}

    def sent_storage(index: int, nbytes: int, where: str | torch.device) -> torch.UntypedStorage:
        if sent is None or not 0 <= index < len(sent):
            raise ExchangeError(f"a tensor names input storage {index}, which was not sent")
        if sent[index].nbytes() != nbytes:
            raise ExchangeError(f"input storage {index} holds {sent[index].nbytes()} bytes, "
                                f"not {nbytes}")
        if index not in copies:
            copies[index] = storage_bytes(sent[index]).to(where, copy=True).untyped_storage()
        return copies[index]

    def storage_at(at: int, nbytes: int, where: str | torch.device) -> torch.UntypedStorage:
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=where).untyped_storage()
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
        data = blob[at:at + nbytes]
        storages[at] = (nbytes, data.to(where, copy=True).untyped_storage())
        if received is not None:
            received.append((at, storages[at][1], data))
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
            offset, nbytes = int(body["offset"]), int(body["nbytes"])
            at = int(body["at"]) if "input" not in body else None
            index = int(body["input"]) if at is None else None
        except (KeyError, TypeError, ValueError) as error:
            raise ExchangeError(f"malformed tensor description: {error}") from None
        if len(shape) != len(stride) or min(shape + [0]) < 0 or min(stride + [0]) < 0 or offset < 0:
            raise ExchangeError("a tensor description with a negative size, stride or offset")
        itemsize = torch.empty(0, dtype=dtype).element_size()
        extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
        if extent * itemsize > nbytes:
            raise ExchangeError(f"a tensor of shape {shape} reaches past its storage's "
                                f"{nbytes} bytes")
        where = "cpu" if keep_host and body.get("host") is True else device
        tensor = torch.empty(0, dtype=dtype, device=where)
        storage = (storage_at(at, nbytes, where) if at is not None
                   else sent_storage(index, nbytes, where))
        if storage.device != tensor.device:
            raise ExchangeError("one storage described on the host and on the device")
        tensor.set_(storage, offset, shape, stride)
        return tensor

    return visit(tree)
