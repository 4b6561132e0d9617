"""The L2 cache state a candidate could change to beat the timer's flush, read from the CUDA
driver (libcuda, through ctypes: neither torch nor Triton exposes it).

The timer writes 256 MB before every timed call so that no call finds its inputs in L2. A
kernel can keep lines there anyway: set aside part of L2 for persisting accesses
(``cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE)``) and mark an address range persisting on
the stream it launches on (an access-policy window, ``cuStreamSetAttribute``). Persisting
lines are evicted only by other persisting accesses, so the flush, a normal access, leaves them
in place and every timed call after the first reads its inputs from L2. Both settings are
needed for the effect and both are off by default; the runner refuses a candidate that turns
either (``persisting_l2_watch``), checked at every Triton launch and after every call, so
no launch of the candidate runs under them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Callable

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
# CUstreamAttrValue (CUlaunchAttributeValue) is a 64-byte union; its access-policy window is
# {void *base_ptr; size_t num_bytes; float hitRatio; CUaccessProperty hitProp, missProp}.
_ATTRIBUTE_VALUE_BYTES = 64


@functools.lru_cache(maxsize=1)
def _driver() -> ctypes.CDLL | None:
    """libcuda, or None where there is none (then there is no L2 state to watch)."""
    for name in ("libcuda.so.1", ctypes.util.find_library("cuda")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def persisting_l2_limit() -> int | None:
    """Bytes of L2 set aside for persisting accesses in the current context (None: unknown)."""
    driver = _driver()
    if driver is None:
        return None
    value = ctypes.c_size_t(0)
    if driver.cuCtxGetLimit(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0:
        return None
    return value.value


def access_policy_window(stream: int) -> tuple[int, int] | None:
    """(base address, bytes) of the access-policy window on ``stream`` (a raw CUstream
    handle), (0, 0) where there is none, None where the driver cannot say (no context is
    current on this thread)."""
    driver = _driver()
    if driver is None:
        return None
    value = (ctypes.c_uint64 * (_ATTRIBUTE_VALUE_BYTES // 8))()
    if driver.cuStreamGetAttribute(ctypes.c_void_p(stream),
                                   CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                   ctypes.byref(value)) != 0:
        return None
    return (value[0], value[1]) if value[1] else (0, 0)


def persisting_l2_watch(stream: int | None) -> Callable[[], list[str]]:
    """A probe of the L2 persistence settings, taken now (before any candidate is imported):
    it returns what differs from now, [] when nothing does."""
    limit, window = persisting_l2_limit(), access_policy_window(stream) if stream is not None else None

    def changes() -> list[str]:
        # A value the driver cannot give here (a thread with no current context: the H200 run
        # of tests/adversarial/background_thread.py) is no evidence of a change.
        found = []
        now = persisting_l2_limit()
        if None not in (now, limit) and now != limit:
            found.append(f"the L2 set aside for persisting accesses (cuCtxSetLimit("
                         f"CU_LIMIT_PERSISTING_L2_CACHE_SIZE)) from {limit} to {now} bytes")
        now_window = access_policy_window(stream) if stream is not None else None
        if None not in (now_window, window) and now_window != window:
            found.append(f"the L2 access-policy window on the harness's stream "
                         f"(cuStreamSetAttribute), now {now_window[1]} bytes")
        return found

    return changes
