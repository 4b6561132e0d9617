# op: aten.relu
# expect: wrong_output
# expect-nvidia: runtime_error
# issue: 21 (torch work the recorder misses: code that runs while the recorders are suspended)
# A reference cycle with a ``__del__`` that computes relu with torch, but only inside a launch
# (it tells by Triton's patched ``tl.program_id``), where the interpreter's own allocations
# make the cyclic collector run while the recorders are suspended. No collection runs inside
# a launch now, so the work is never done and the output stays wrong. Found by a red-team
# pass, 2026-12-06. The allocating loop is the interpreter's way to make the collector run;
# Triton's compiler refuses it (H100, Triton 3.6: "error encountered during parsing"), so on
# a GPU the cheat fails before it can try.
import torch
import triton
import triton.language as tl

class _State:
    pass


_S = _State()
_S.plain_program_id = tl.program_id   # an attribute: a module-level alias is patched too


class _Bomb:
    def __init__(self, x, out):
        self.x = x
        self.out = out
        self.me = self   # a cycle: only the cyclic GC frees it

    def __del__(self):
        if _S.current is not self.out:
            return   # a newer call began: this one is stale, let it die
        if tl.program_id is _S.plain_program_id:
            _Bomb(self.x, self.out)   # not inside a launch yet: re-arm
            return
        self.out.copy_(self.x.relu())   # inside the launch, unrecorded
        _S.current = None


@triton.jit
def _busy(flag_ptr, ITERS: tl.constexpr):
    acc = tl.zeros([16], dtype=tl.int32)
    held = (acc, acc)
    for i in range(ITERS):   # nested tuples kept alive: net allocations cross gen0's threshold
        held = (held, tl.arange(0, 16))
    tl.store(flag_ptr + tl.arange(0, 16), acc)


def kernel(x):
    out = torch.empty_like(x)
    _S.current = out
    _Bomb(x, out)
    scratch = torch.empty(16, dtype=torch.int32, device=x.device)
    _busy[(1,)](scratch, ITERS=2000)
    return out
