"""How much device memory one evaluation job holds, so a shared device admits jobs by bytes.

Several judges check candidates on one GPU at once (``--workers-per-device``). Counting them
is not enough: on an H100 (80 GB) six judges ran out of memory in four or five of their first
seven jobs at a sweep's start, since one job of a cuBLAS copy holds 58-64 GiB (judge and runner
together) while the median job holds 6.7 GiB
(``benchmarks/results/h100-full-sweep-3d084dd-rows.txt``). Each such job ran again alone, and
the count of jobs allowed to share the device was cut for every later one. So the device's
gate (``devices._DeviceGate``) admits a job by an estimate of its bytes (``JobMemory.need``):

- once a job of the same operator finished on this pool, the device memory it held at most
  (``EvalResult.device_peak_judge_bytes`` + ``device_peak_runner_bytes``; ``OBSERVED_MARGIN``
  says why no margin): the same checks on the same inputs, only the candidate's own
  allocations differ;
- else the last such peak an earlier sweep of the machine kept (``peak_store.PeakStore``, in
  the baselines file);
- else a model: a judge and its runner hold about ``PER_BATCH_BYTE`` times the largest
  batch of timed input sets (``checker.TIMED_BATCH_BYTES`` batches them, three sets a case,
  each with the reference's output), plus ``BASE_BYTES`` of their own (the timer's flush
  buffer, the allocator's blocks). On the 42 operators of that H100 run the peak was 2 to 12
  times the batch above the base (median 6.6). Over the 60 operators of two H100 runs the
  model's needs add up to 1.14 times the peaks, and it reads 15 of them low, by up to 13 GiB:
  the gate's margin and the retry alone after running out of memory absorb that. An operator
  that only reads its arguments gets ``PER_BATCH_BYTE_READ_ONLY`` instead: it held less, and
  holds a batch less since its baseline is no longer timed on copies.

The runner's part of an observed peak is what the runner reported: a candidate can make it
up. Too high, its operator's next jobs wait for more memory than they need; too low, a job
beside them may run out and run again alone. Either costs time, never a verdict.

The batch is read from the operator's cases drawn on torch's ``meta`` device (shapes and
dtypes, no data, no device), with the reference run there for its output's size where it can
run on ``meta``. An operator whose inputs cannot be drawn there gets ``UNKNOWN_BYTES``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from kgb_core.evaluation.peak_store import PeakStore
    from kgb_core.operators import OperatorSpec

GIB = 1 << 30
BASE_BYTES = int(1.5 * GIB)
PER_BATCH_BYTE = 8
# An operator that only reads its arguments: its baseline is timed on the judge's pristine sets
# themselves, where one that writes them gets copies (``Evaluation._baseline_sets``), one batch
# less. Over the same 60 operators the 23 that only read held 2.3 to 8.0 times the batch above
# the base (median 4.0), the 35 that write 5.0 to 12.5 (median 6.8), both with the copies.
PER_BATCH_BYTE_READ_ONLY = 6
# Where the model cannot read an operator's inputs: about the median job above, doubled.
UNKNOWN_BYTES = 12 * GIB
# An observed peak is the next job of the operator's need as it stands, with no margin: it is
# already above what the job held at any one moment (the judge's and the runner's peaks, each
# its allocator's reserved bytes with the cached blocks, come at different stages), the model
# read 15 of the 60 H100 operators lower than it and none of them ran out of memory
# (h100-full-sweep-d0799ab), and a candidate that allocates more than the last one did runs
# again alone if it runs out. With a margin of 1.25 the gate admitted that sweep's jobs more
# slowly than by the model (benchmarks/gate_replay.py: 527 s against 450, 431 with none).
OBSERVED_MARGIN = 1.0
# A process's device context and what its libraries keep outside the allocator's count.
PROCESS_BYTES = 3 * GIB // 4
CAPACITY_MARGIN = 0.95


def shared_capacity(total: int, workers: int) -> int:
    """Bytes a device's jobs may hold together: its memory less each worker's two device
    contexts (judge and runner, which no allocator counts), with a margin for fragmentation."""
    return int((total - workers * 2 * PROCESS_BYTES) * CAPACITY_MARGIN)


def storage_bytes(values: Any) -> int:
    """Bytes of the distinct storages under ``values`` (a view counts its storage once)."""
    from kgb_core.evaluation.runner import tensors_in

    storages = {id(t.untyped_storage()): t.untyped_storage().nbytes()
                for t in tensors_in(list(values))}
    return sum(storages.values())


def case_set_bytes(spec: "OperatorSpec", case: Any, dtype: str) -> int:
    """One input set of ``case`` in ``dtype`` and the reference's output on it, drawn on
    ``meta``; the output counts as nothing where the reference cannot run there (a loop that
    reads values). Raises where the inputs themselves cannot be drawn on ``meta``."""
    from kgb_core.operators import InputContext

    inputs = list(spec.make_inputs(InputContext(case, dtype, 0, "meta")))
    held = storage_bytes(inputs)
    try:
        held += storage_bytes([spec.reference(*inputs)])
    except Exception:  # noqa: BLE001 - a reference that needs values: its inputs alone
        pass
    return held


def timed_cases(spec: "OperatorSpec", quirks: Any) -> list[tuple[Any, str]]:
    """The (case, dtype) pairs a backend with ``quirks`` times, in the judge's order."""
    return [(case, dtype) for case in spec.cases_in(quirks.timed_tiers) if not case.heldout
            for dtype in spec.dtypes if dtype not in quirks.skipped_dtypes]


def largest_timed_batch(spec: "OperatorSpec", quirks: Any) -> int:
    """Bytes of the largest batch of timed cases, as ``Evaluation._time`` forms them: each
    case's ``TIMING_SEEDS`` sets, a batch closed once it holds ``TIMED_BATCH_BYTES``."""
    from kgb_core.evaluation.checker import TIMED_BATCH_BYTES, TIMING_SEEDS

    batch = largest = 0
    for case, dtype in timed_cases(spec, quirks):
        batch += case_set_bytes(spec, case, dtype) * len(TIMING_SEEDS)
        largest = max(largest, batch)
        if batch >= TIMED_BATCH_BYTES:
            batch = 0
    return largest


def modelled_bytes(spec: "OperatorSpec", quirks: Any) -> int:
    """The model's bytes for one job of ``spec`` (the module's docstring)."""
    factor = PER_BATCH_BYTE if spec.mutated_args else PER_BATCH_BYTE_READ_ONLY
    try:
        return BASE_BYTES + factor * largest_timed_batch(spec, quirks)
    except Exception:  # noqa: BLE001 - an input maker that needs real values
        return UNKNOWN_BYTES


class JobMemory:
    """Each operator's device bytes for one job: its last observed peak when one finished on
    this pool, else the one ``store`` kept from an earlier sweep, else the model's. Shared by
    a pool's threads; ``sources`` says, by operator, where its last need came from."""

    def __init__(self, spec_of: Callable[[str], "OperatorSpec | None"], quirks: Any,
                 store: "PeakStore | None" = None) -> None:
        self._spec_of = spec_of
        self._quirks = quirks
        self._store = store
        self._stored: dict[str, int] | None = None  # read from the store at first need
        self._modelled: dict[str, int] = {}
        self._observed: dict[str, int] = {}
        self.sources: dict[str, str] = {}
        self._lock = threading.Lock()

    def need(self, op: str) -> int:
        """A job of ``op``'s bytes, as its admission reads them (``sources`` says whence)."""
        needed, source = self._need(op)
        with self._lock:
            self.sources[op] = source
        return needed

    def _need(self, op: str) -> tuple[int, str]:
        with self._lock:
            if self._stored is None:
                self._stored = self._store.load() if self._store is not None else {}
            for source, peaks in (("observed", self._observed), ("stored", self._stored)):
                if op in peaks:
                    return int(peaks[op] * OBSERVED_MARGIN), source
        if op not in self._modelled:
            spec = self._spec_of(op)
            modelled = UNKNOWN_BYTES if spec is None else modelled_bytes(spec, self._quirks)
            with self._lock:
                self._modelled[op] = modelled
        return self._modelled[op], "model"

    def prefetch(self, ops: list[str]) -> None:
        """The needs of ``ops``, read now (a pool's thread, ahead of their jobs): the model's
        draws on ``meta`` take seconds of the host for some operators. Not counted in
        ``sources``, which holds only the needs jobs were admitted by."""
        for op in dict.fromkeys(ops):
            self._need(op)

    def observe(self, op: str, judge_bytes: int | None, runner_bytes: int | None) -> None:
        """A finished job's peaks (None where not counted: nothing learned), kept for this
        pool's next jobs of ``op`` and in the store for later sweeps'."""
        if judge_bytes is None and runner_bytes is None:
            return
        peak = (judge_bytes or 0) + (runner_bytes or 0)
        with self._lock:
            self._observed[op] = peak
        if self._store is not None and peak > 0:
            self._store.put(op, peak)

    def source_counts(self) -> dict[str, int]:
        """How many operators' needs came from each source (observed, stored, model)."""
        with self._lock:
            counts: dict[str, int] = {}
            for source in self.sources.values():
                counts[source] = counts.get(source, 0) + 1
        return counts


__all__ = ["JobMemory", "case_set_bytes", "largest_timed_batch", "modelled_bytes",
           "shared_capacity", "storage_bytes", "timed_cases"]
