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
SKIPPED_DENIED = "skipped_denied"
LIMIT_EXCEEDED = "limit_exceeded"
REFERENCE_USED = "reference_used"
TAMPERING = "tampering"
STALE_OUTPUT = "stale_output"
DEFERRED_WORK = "deferred_work"
OUTPUT_ALIASES_INPUT = "output_aliases_input"
HELDOUT_FAILED = "heldout_failed"
GHOST_REPLAY_MATCHED = "ghost_replay_matched"
GHOST_REPLAY_DETECTED = "ghost_replay_detected"
HOST_READ = "host_read"
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
    REFERENCE_USED: "torch computed the result: an aten op other than allocation, views and "
                    "copies ran during kernel(...)",
    TAMPERING: "the candidate replaced an attribute of torch, triton, time, builtins or the "
               "harness (a comparison, a timer, the launch hook)",
    STALE_OUTPUT: "the output did not follow new input values (a result cached across calls, "
                  "keyed on identity, pointer or shape)",
    DEFERRED_WORK: "work left running after kernel(...) returned (a thread, or a launch on a "
                   "stream other than the harness's) where the timer cannot see it",
    OUTPUT_ALIASES_INPUT: "the output shares memory with an input the operator does not write",
    HELDOUT_FAILED: "every shown case passed but a held-out case (never shown in prompts) failed",
    GHOST_REPLAY_MATCHED: "with every Triton launch turned into a no-op the output was still "
                          "right: the Triton kernels were not doing the work",
    HOST_READ: "kernel(...) read tensor values on the host (device-to-host copies, numpy, "
               "tolist, item) beyond a few scalars per call: the values may be computed there, "
               "not by its Triton kernels",
    GHOST_REPLAY_DETECTED: "with every Triton launch turned into a no-op the candidate behaved "
                           "otherwise than on the same inputs with its launches run (it raised, "
                           "or launched another number of kernels): it tells the replay from a "
                           "real call",
    SKIPPED_UNSUPPORTED: "no case could run on this backend (its quirks rule them all out)",
    SKIPPED_DENIED: "the backend's deny-list names this operator as known not to run there; "
                    "nothing was generated or evaluated",
    LIMIT_EXCEEDED: "a Triton launch asked for more warps, or a larger block, than the "
                    "backend's quirks allow",
    NO_CANDIDATE: "the method produced no candidate (it failed, or has none for this operator)",
    HARNESS_ERROR: "the harness itself failed on this candidate (a bug: please report it)",
}

# After these the judge process is replaced. A candidate's crash, hang, leftover threads or
# tampering happen in its runner, a process that ends with it: the judge ran no candidate code,
# so only its own failures (a harness error; a judge that hung or died is replaced by the
# harness anyway) make a new one worth its start-up.
RESTART_WORKER_AFTER = frozenset({HARNESS_ERROR})

ALL = tuple(DESCRIPTIONS)

# Neither passed nor failed: an operator whose every sample has one of these is left out of
# correct% and fast_p, and counted as skipped instead.
SKIPPED = frozenset({SKIPPED_UNSUPPORTED, SKIPPED_DENIED})
