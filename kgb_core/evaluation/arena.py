"""Shared memory between a judge and its runner: the exchange's bytes, mapped by both sides.

The tensors of a call crossed the boundary as a file per call until now: the judge copied its
inputs off the device, wrote them, the runner read them into its memory, and the outputs made
the same trip back. On the H100 that was most of a candidate's cost (``aten.neg``, 25 calls:
1.66 s of 2.55 s per candidate in requests; a 64 MB round trip 108 ms,
``results/h100-callcost-1731123.txt``): every byte was copied twice on the host besides its
transfers, into page cache that each new file allocated afresh.

Now each runner gets two arenas, made by the judge for that runner alone and passed with its
channel: ``requests`` (the judge copies a call's inputs off the device straight into it; the
runner copies them onto its device straight out of it) and ``replies`` (the other way round).
The bytes are laid out as ``exchange.pack`` describes them; the JSON tree still crosses the
socket, with the number of bytes it covers.

What keeps the judge safe from what the runner does with its mappings:
- The judge reads a reply only by copying it out once (``exchange.unpack`` builds fresh
  storage); what it then judges is its copy. A runner that rewrites the reply meanwhile gives
  the judge bytes it could have sent in the first place.
- The judge never reads the request arena back: a reply that names an input unchanged is
  rebuilt from the judge's own device copy. A runner that writes into the request arena
  changes only what it is itself handed.
- Both arenas are sealed against shrinking before the runner gets them (``F_SEAL_SHRINK``): a
  read or a write past the end of a shrunk file is SIGBUS, which would kill the judge. The
  runner may grow the reply arena, within the file-size limit every runner has
  (``limits.MAX_FILE_BYTES``), and the judge maps only as much as a reply claims, within its
  own limit.
- Fresh arenas for every runner: one candidate's bytes (a held-out case's inputs, an answer)
  never reach another.
Both are memfds (Linux, as the runner template is): no path, nothing on disk, gone with the
last descriptor and mapping.
"""

from __future__ import annotations

import fcntl
import mmap
import os

import torch

from kgb_core.evaluation.exchange import ExchangeError

# Mappings grow in steps of this much (and by at least a quarter), so a case a little larger
# than the last does not map again.
_GRANULE = 1 << 20


def _round_up(nbytes: int) -> int:
    return -(-nbytes // _GRANULE) * _GRANULE


class Arena:
    """One memfd, mapped into this process as a uint8 tensor as far as it has been needed."""

    def __init__(self, fd: int, limit_bytes: int) -> None:
        self._fd = fd
        self.limit_bytes = limit_bytes
        self._view: torch.Tensor | None = None

    @classmethod
    def create(cls, name: str, limit_bytes: int) -> "Arena":
        """A new, empty arena that can grow but never shrink."""
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        return cls(fd, limit_bytes)

    def fileno(self) -> int:
        return self._fd

    def _mapped(self) -> int:
        return 0 if self._view is None else self._view.numel()

    def _grown(self, nbytes: int) -> int:
        """How much to map for ``nbytes``: a whole number of steps, and a quarter more than
        is mapped now."""
        return max(_round_up(nbytes), self._mapped() * 5 // 4)

    def _map(self, size: int) -> None:
        # The tensor holds the mapping (torch.frombuffer keeps its buffer alive): views handed
        # out before a larger mapping replaced this one stay valid.
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        mapping = mmap.mmap(self._fd, size, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self._view = torch.frombuffer(mapping, dtype=torch.uint8)

    def _check(self, nbytes: int) -> None:
        if not 0 <= nbytes <= self.limit_bytes:
            raise ExchangeError(f"{nbytes} bytes asked of the exchange, over its limit of "
                                f"{self.limit_bytes}")

    def for_writing(self, nbytes: int) -> torch.Tensor:
        """The arena's first ``nbytes`` to write into, the arena grown to hold them."""
        self._check(nbytes)
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8)
        if self._mapped() < nbytes:
            size = min(self._grown(nbytes), self.limit_bytes)  # nbytes is within the limit
            if os.fstat(self._fd).st_size < size:
                try:
                    os.ftruncate(self._fd, size)
                except OSError as error:
                    raise ExchangeError(f"the exchange could not grow to {size} bytes "
                                        f"({error.strerror})") from None
            self._map(size)
        assert self._view is not None
        return self._view[:nbytes]

    def for_reading(self, nbytes: int) -> torch.Tensor:
        """The arena's first ``nbytes``, as the other side wrote them; refused when the arena
        holds fewer. Good until the other side writes again: copy out what is kept."""
        self._check(nbytes)
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8)
        if self._mapped() < nbytes:
            size = os.fstat(self._fd).st_size
            if size < nbytes:
                raise ExchangeError(f"the exchange holds {size} bytes, not the {nbytes} "
                                    f"described")
            self._map(min(size, self._grown(nbytes)))
        assert self._view is not None
        return self._view[:nbytes]

    def close(self) -> None:
        """Close the descriptor and drop the mapping (unmapped when no view of it is left)."""
        self._view = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class Arenas:
    """A runner's two arenas: ``requests`` (judge to runner) and ``replies`` (back)."""

    def __init__(self, requests: Arena, replies: Arena) -> None:
        self.requests = requests
        self.replies = replies

    @classmethod
    def create(cls, limit_bytes: int) -> "Arenas":
        """The judge's, for one new runner."""
        return cls(Arena.create("kgb-requests", limit_bytes),
                   Arena.create("kgb-replies", limit_bytes))

    @classmethod
    def attach(cls, fds: tuple[int, int], limit_bytes: int) -> "Arenas":
        """The runner's, over the descriptors it was handed (requests, replies)."""
        return cls(Arena(fds[0], limit_bytes), Arena(fds[1], limit_bytes))

    def fds(self) -> list[int]:
        return [self.requests.fileno(), self.replies.fileno()]

    def close(self) -> None:
        self.requests.close()
        self.replies.close()
