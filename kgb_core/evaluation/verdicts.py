"""Verdicts: one field, one cause. A candidate passes only as ``pass``."""

PASS = "pass"
SCREEN_REJECTED = "screen_rejected"
COMPILE_ERROR = "compile_error"
RUNTIME_ERROR = "runtime_error"
TIMEOUT = "timeout"
CRASHED = "crashed"
OOM = "oom"
WRONG_OUTPUT = "wrong_output"
WRONG_SHAPE_OR_DTYPE = "wrong_shape_or_dtype"
NO_TRITON_LAUNCH = "no_triton_launch"
INPUT_MUTATED = "input_mutated"
SKIPPED_UNSUPPORTED = "skipped_unsupported"
HARNESS_ERROR = "harness_error"
NO_CANDIDATE = "no_candidate"

DESCRIPTIONS = {
    PASS: "every checked case matched the reference within tolerance",
    SCREEN_REJECTED: "the static screen refused the source before it ran",
    COMPILE_ERROR: "the source did not import, or a Triton kernel failed to compile",
    RUNTIME_ERROR: "kernel(...) raised",
    TIMEOUT: "the worker did not answer within the time limit and was killed",
    CRASHED: "the worker process died (segfault, os._exit, abort)",
    OOM: "the candidate ran out of device or host memory",
    WRONG_OUTPUT: "values differ from the reference beyond tolerance, or are NaN/Inf where "
                  "the reference is finite",
    WRONG_SHAPE_OR_DTYPE: "the output's structure, shape or dtype differs from the reference's",
    NO_TRITON_LAUNCH: "kernel(...) returned without launching any @triton.jit kernel",
    INPUT_MUTATED: "an input the operator must not write was changed",
    SKIPPED_UNSUPPORTED: "no case could run on this backend (its quirks rule them all out)",
    NO_CANDIDATE: "the method produced no candidate (it failed, or has none for this operator)",
    HARNESS_ERROR: "the harness itself failed on this candidate (a bug: please report it)",
}

# After these the worker process is not trusted any more and is replaced: it may be hung,
# dead, out of memory, or (on CUDA) holding a poisoned context after an illegal access.
RESTART_WORKER_AFTER = frozenset({TIMEOUT, CRASHED, OOM, RUNTIME_ERROR, HARNESS_ERROR})

ALL = tuple(DESCRIPTIONS)
