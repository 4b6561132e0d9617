"""The runner's shared memory (kgb_core.evaluation.arena): what one side places the other reads,
across a real process boundary; the judge copies a reply out before it judges it; a runner can
neither shrink the reply arena under the judge nor claim bytes it never wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from kgb_core.evaluation import exchange
from kgb_core.evaluation.arena import Arena, Arenas


def test_a_tree_placed_in_an_arena_unpacks_to_fresh_tensors_with_its_aliasing_kept():
    arenas = Arenas.create(1 << 30)
    base = torch.randn(65, 3)
    tree = [base, base[:, 1], torch.arange(10), (2.5, None)]
    packed = exchange.pack(tree)
    nbytes = packed.place(arenas.requests)
    assert nbytes == packed.nbytes == 832 + 80  # base's 780 bytes padded to 64, then arange
    blob = arenas.requests.for_reading(nbytes)
    a, b, c, rest = exchange.unpack(packed.tree, blob, "cpu")
    assert torch.equal(a, base) and torch.equal(b, base[:, 1]) and torch.equal(c, tree[2])
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    assert a.untyped_storage().data_ptr() != blob.data_ptr()  # rebuilt, never the arena
    blob.zero_()  # the other side writes again: what was unpacked is the reader's own
    assert torch.equal(a, base) and rest == (2.5, None)


def test_the_same_bytes_reach_another_process_and_its_reply_comes_back(tmp_path):
    """A real second process, handed the two descriptors as a runner is: it reads the request,
    writes the negated tensor into the reply arena (growing it), and the judge side reads it."""
    arenas = Arenas.create(1 << 30)
    x = torch.randn(300_000)  # 1.2 MB: past one mapping step
    request = exchange.pack([x])
    nbytes = request.place(arenas.requests)
    runner = textwrap.dedent(f"""
        import json, sys, torch
        from kgb_core.evaluation import exchange
        from kgb_core.evaluation.arena import Arenas
        arenas = Arenas.attach(({arenas.requests.fileno()}, {arenas.replies.fileno()}), 1 << 30)
        tree = json.loads(sys.stdin.read())
        [x] = exchange.unpack(tree, arenas.requests.for_reading({nbytes}), "cpu")
        reply = exchange.pack(torch.neg(x))
        print(json.dumps({{"tree": reply.tree, "bytes": reply.place(arenas.replies)}}))
    """)
    done = subprocess.run([sys.executable, "-c", runner], input=json.dumps(request.tree),
                          capture_output=True, text=True, pass_fds=arenas.fds(), timeout=120,
                          check=True)
    reply = json.loads(done.stdout)
    back = exchange.unpack(reply["tree"], arenas.replies.for_reading(reply["bytes"]), "cpu")
    assert torch.equal(back, -x)


def test_a_runner_cannot_shrink_an_arena_under_the_judge_but_may_grow_the_reply_arena():
    """A read past the end of a shrunk file is SIGBUS, which would kill the judge: the seal
    refuses the shrink to whoever holds the descriptor, the runner included."""
    judge = Arenas.create(1 << 30)
    judge.replies.for_writing(3 << 20)  # mapped by the judge: 3 MB
    judge.requests.for_writing(3 << 20)  # which the judge writes: shrinking it kills it too
    runner = Arena(os.dup(judge.replies.fileno()), 1 << 30)
    for fd in (runner.fileno(), judge.requests.fileno()):
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 0)
    runner.for_writing(5 << 20)[-1] = 7  # growing is allowed
    assert judge.replies.for_reading(5 << 20)[-1].item() == 7


def test_a_reply_claiming_more_bytes_than_were_written_or_allowed_is_refused():
    arenas = Arenas.create(8 << 20)
    arenas.replies.for_writing(100)  # the arena is now one mapping step long
    with pytest.raises(exchange.ExchangeError, match="holds"):
        Arena(os.dup(arenas.replies.fileno()), 8 << 20).for_reading(2 << 20)
    with pytest.raises(exchange.ExchangeError, match="over its limit"):
        arenas.replies.for_reading(9 << 20)
    with pytest.raises(exchange.ExchangeError, match="over its limit"):
        arenas.replies.for_reading(-1)


def test_views_handed_out_before_the_arena_grew_stay_valid():
    arena = Arenas.create(1 << 30).requests
    small = arena.for_writing(1000)
    small.fill_(3)
    large = arena.for_writing(10 << 20)  # mapped again, larger
    assert int(small.sum()) == 3000 and large[:1000].eq(3).all()


def test_every_runner_gets_arenas_of_its_own_that_start_empty():
    first, second = Arenas.create(1 << 30), Arenas.create(1 << 30)
    first.replies.for_writing(1 << 20).fill_(1)
    assert os.fstat(second.replies.fileno()).st_size == 0
    assert set(first.fds()).isdisjoint(second.fds())
