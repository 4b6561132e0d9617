"""Whether an output's elements overlap in memory: a new tensor gives each element its own bytes.

Every operator kgb checks returns new tensors (views are specified as their materialising copies,
``kgb_sources/aten/movement.py``). An output that is an expanded (stride-0) view, or a strided
view whose elements share bytes, reads right wherever every element should equal one value
(``full``, ``zeros``, a broadcast), yet it is one value seen many times: a caller that writes
one element writes them all. The judge refuses it with ``wrong_shape_or_dtype``.

A layout is cleared by its strides alone where it can be (every honest dense layout, permuted or
sliced, is); only what the strides cannot clear is counted element by element.
"""

from __future__ import annotations

import torch


def _cleared_by_strides(tensor: torch.Tensor) -> bool:
    """No two indices of ``tensor`` reach one element: a sufficient test on the strides (each
    dimension, in order of stride, steps past everything the smaller ones span)."""
    dims = sorted((stride, size) for size, stride in zip(tensor.shape, tensor.stride())
                  if size > 1)
    spanned = 0
    for stride, size in dims:
        if stride <= spanned:
            return False
        spanned += stride * (size - 1)
    return True


def _span(tensor: torch.Tensor) -> tuple[int, int]:
    """The first and one past the last byte ``tensor`` reaches in its storage."""
    size = tensor.element_size()
    start = tensor.storage_offset()
    last = start + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride()))
    return start * size, (last + 1) * size


def _element_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """Every byte offset ``tensor`` reaches in its storage, one row per element."""
    size = tensor.element_size()
    elements = tensor.untyped_storage().nbytes() // size
    index = torch.arange(elements, device=tensor.device).as_strided(
        tensor.shape, tensor.stride(), tensor.storage_offset()).reshape(-1, 1)
    return (index * size + torch.arange(size, device=tensor.device)).reshape(-1)


def overlapping(tensors: list[torch.Tensor]) -> str | None:
    """How elements of ``tensors`` share memory (within one, or between two), or None."""
    groups: dict[tuple[str, int], list[torch.Tensor]] = {}
    for tensor in tensors:
        if tensor.numel():
            key = (str(tensor.device), tensor.untyped_storage().data_ptr())
            groups.setdefault(key, []).append(tensor)
    for group in groups.values():
        for tensor in group:
            if not _cleared_by_strides(tensor) and _counted_overlap([tensor]):
                return (f"an output of shape {tuple(tensor.shape)} with strides "
                        f"{tuple(tensor.stride())} reaches some elements more than once")
        spans = sorted(_span(t) for t in group)
        if all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])):
            continue
        if _counted_overlap(group):
            return f"{len(group)} outputs share elements of one storage"
    return None


def _counted_overlap(group: list[torch.Tensor]) -> bool:
    nbytes = group[0].untyped_storage().nbytes()
    counts = torch.zeros(nbytes, dtype=torch.int32, device=group[0].device)
    for tensor in group:
        counts.index_add_(0, _element_bytes(tensor),
                          torch.ones(1, dtype=torch.int32, device=tensor.device).expand(
                              tensor.numel() * tensor.element_size()))
    return bool((counts > 1).any())

