"""Slow references' answers kept in the judge's host memory, for the operator's next candidate.

Every candidate of an operator is checked on the same inputs (the same seeds, cases and dtypes:
``kgb_core/draw_cache.py`` keeps the large draws), so the reference computes the same answers
again for each one. Most references are a few device kernels, cheaper than a copy of their
answer; a few loop in Python (vllm.convert_vertical_slash_indexes replays a CUDA state machine:
20 s a call on the H100), and a method that samples five candidates an operator, or an agent
that iterates, paid those seconds for every candidate. So an operator's reference that took
``SLOW_S`` or more on a call, or that runs on the host (``OperatorSpec.host_reference``), has
its later answers kept: the answer and the arguments it wrote, as host copies, under a digest
of everything it was given (each tensor's dtype, shape, strides and bytes; every other
argument's ``repr``). A call on the same inputs gets copies of what the reference returned and
wrote, on the inputs' device; any other call computes.

Nothing a candidate sends goes into a key's inputs unexamined: the key is the inputs' content,
so a kept answer is always the reference's answer to those exact inputs. The cache lives in
the judge only, bounded by ``KGB_REFERENCE_CACHE_MB`` (default 1024; 0 turns it off), least
recently used first out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Hashable

import torch

from kgb_core.budget_cache import BudgetCache, budget_from_environment, tensor_bytes
from kgb_core.evaluation.runner import clone_tree, tensors_in

# A reference that took this long on one call has its later answers kept: far above a few
# device kernels (milliseconds), far below a Python loop over a case (seconds).
SLOW_S = 0.25


@dataclass
class KeptAnswer:
    """A reference's answer and the arguments it wrote (by index), as host copies."""

    expected: Any
    written: dict[int, Any]
    nbytes: int


def digest(inputs: list[Any]) -> bytes:
    """What fixes a deterministic reference's answer: every tensor's dtype, shape, strides,
    offset and bytes, every other argument's ``repr``, in order."""
    hasher = hashlib.blake2b(digest_size=20)

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            hasher.update(f"T{value.dtype}{tuple(value.shape)}{value.stride()}"
                          f"{value.storage_offset()}|".encode())
            flat = value.detach().contiguous().cpu().reshape(-1)
            hasher.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
        elif isinstance(value, (list, tuple)):
            hasher.update(f"{type(value).__name__}{len(value)}[".encode())
            for item in value:
                feed(item)
            hasher.update(b"]")
        elif isinstance(value, dict):
            hasher.update(f"dict{len(value)}{{".encode())
            for name in sorted(value, key=repr):
                hasher.update(repr(name).encode())
                feed(value[name])
            hasher.update(b"}")
        else:
            hasher.update(f"{type(value).__qualname__}:{value!r}|".encode())

    feed(list(inputs))
    return hasher.digest()


class ReferenceCache:
    """Kept answers by (operator, reference, digest), at most ``budget`` bytes in all."""

    def __init__(self, budget: int | None = None) -> None:
        self.answers = BudgetCache(
            budget_from_environment("KGB_REFERENCE_CACHE_MB") if budget is None else budget,
            size=lambda answer: answer.nbytes)
        # The references found slow (by their operator and function), whose answers are kept.
        self._slow: set[tuple[str, Any]] = set()

    def keeps(self, op: str, reference: Any, on_host: bool) -> bool:
        """Whether this reference's answers are looked up and kept."""
        return self.answers.budget > 0 and (on_host or (op, reference) in self._slow)

    def timed(self, op: str, reference: Any, seconds: float) -> None:
        """One call's seconds: a slow one marks the reference's answers as worth keeping."""
        if seconds >= SLOW_S:
            self._slow.add((op, reference))

    @staticmethod
    def key(op: str, reference: Any, inputs: list[Any]) -> Hashable:
        # The function itself, not its name: a test's replaced reference keeps the spec's id.
        return (op, reference, digest(inputs))

    def get(self, key: Hashable, inputs: list[Any]) -> Any:
        """The kept answer, copied to the inputs' device, with the arguments it wrote written
        into ``inputs`` again; ``None`` where none is kept."""
        kept = self.answers.get(key)
        if kept is None:
            return None
        for index, values in kept.written.items():
            for target, value in zip(tensors_in(inputs[index]), tensors_in(values)):
                target.copy_(value)
        device = next(iter(tensors_in(list(inputs))), None)
        return clone_tree(kept.expected, device.device if device is not None else "cpu")

    def put(self, key: Hashable, expected: Any, inputs: list[Any],
            written: list[int]) -> None:
        """Keep ``expected`` and the written arguments of ``inputs`` (host copies), when they
        fit the budget: measured before anything is copied off the device."""
        written_now = {i: inputs[i] for i in written if i < len(inputs)}
        nbytes = tensor_bytes([expected, list(written_now.values())])
        if nbytes > self.answers.budget or self.answers.holds(key):
            return
        self.answers.put(key, KeptAnswer(clone_tree(expected, "cpu"),
                                         {i: clone_tree(value, "cpu")
                                          for i, value in written_now.items()}, nbytes))


# The judge's, made at import and never rebound (as draw_cache.CACHE).
CACHE = ReferenceCache()
