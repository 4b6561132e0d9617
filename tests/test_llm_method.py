"""The llm method against a real loopback server speaking the OpenAI protocol: verdicts, token
counts, costs and retries recorded exactly."""

from __future__ import annotations

import json
import sqlite3

import pytest
from chat_server import ChatServer, Reply
from conftest import KERNELS, kgb

from kgb_core.plugins import load_registry


def _answer(code: str) -> str:
    return f"Here is the kernel.\n\n```python\n{code}```\nIt handles strides."


def _run(tmp_path, server, ops, *, samples=1, extra="", env_key="KGB_TEST_LLM_KEY"):
    config = tmp_path / "run.toml"
    config.write_text(
        f'[run]\nbackend = "cpu"\n'
        f'[method]\nname = "llm"\nbase_url = "{server.base_url}"\nmodel = "test-model"\n'
        f'api_key_env = "KGB_TEST_LLM_KEY"\nmax_retries = 2\n'
        f'price_input_per_mtok = 2.0\nprice_output_per_mtok = 10.0\n{extra}'
        f'[evaluation]\nseeds = [0]\ntiming = false\n')
    db = tmp_path / "r.db"
    args = ["run", "--config", str(config), "--db", str(db), "--samples", str(samples)]
    for op in ops:
        args += ["--op", op]
    done = kgb(*args, env={env_key: "sk-loopback"})
    return done, db


def _rows(db):
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    return [dict(row) for row in conn.execute("SELECT * FROM results ORDER BY id")]


# One `kgb run` answers five tests (each run costs a process and a judge start, about 10 s of
# the suite): every operator has a script of its own, replayed in order whatever order the run
# takes the operators in, so each test reads its own operator's requests and row.
SHARED_SCRIPTS = {
    "aten.relu": lambda kernels: [Reply(_answer(kernels["aten.relu"]), usage=(1234, 567))],
    "aten.sin": lambda kernels: [Reply("Sorry, I can not write that kernel.")],
    "aten.exp": lambda kernels: [Reply(status=429), Reply(_answer(kernels["aten.exp"]))],
    "aten.cos": lambda kernels: [Reply(_answer(kernels["aten.cos"]), usage=None)],
    # Three failures use up max_retries = 2; a fourth request would get the right answer.
    "aten.neg": lambda kernels: [Reply(status=500)] * 3 + [Reply(_answer(kernels["aten.neg"]))],
    "aten.abs": lambda kernels: [Reply(_answer(kernels["aten.abs"]))],
}


def _op_of(body) -> str:
    return body["messages"][0]["content"].split("`")[1]  # "... for the operator `aten.neg`."


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """The shared run: its exit, and for each operator its requests and stored rows."""
    registry = load_registry()
    scripts = {op: make({op: registry.operator(op).reference_kernel()})
               for op, make in SHARED_SCRIPTS.items()}
    requests = {op: [] for op in scripts}

    def respond(body):
        op = _op_of(body)
        requests[op].append(body)
        return scripts[op].pop(0) if scripts[op] else Reply(status=500)

    with ChatServer(respond=respond) as server:
        done, db = _run(tmp_path_factory.mktemp("shared"), server, list(SHARED_SCRIPTS))
    assert done.returncode == 0, done.stderr
    rows = {op: [row for row in _rows(db) if row["op"] == op] for op in scripts}
    return done, requests, rows


def test_a_right_answer_passes_with_exact_tokens_and_cost(shared_run):
    _, requests, rows = shared_run
    (row,) = rows["aten.relu"]
    assert row["verdict"] == "pass"
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1234, 567)
    assert abs(row["cost_usd"] - (1234 * 2.0 + 567 * 10.0) / 1e6) < 1e-12
    generation = json.loads(row["generation"])
    assert "aten.relu" in generation["prompt"] and generation["tokens_estimated"] is False
    assert "It handles strides." in generation["answer"]
    (request,) = requests["aten.relu"]
    assert request["model"] == "test-model" and request["temperature"] == 0.0
    assert request["messages"][0]["content"] == generation["prompt"]


def test_wrong_then_right_is_pass_at_2(tmp_path, registry):
    wrong = (KERNELS / "add_wrong_values.py").read_text()
    right = registry.operator("aten.add").reference_kernel()
    with ChatServer([Reply(_answer(wrong)), Reply(_answer(right))]) as server:
        done, db = _run(tmp_path, server, ["aten.add"], samples=2)
    assert done.returncode == 0, done.stderr
    assert [(r["sample"], r["verdict"]) for r in _rows(db)] == [(0, "wrong_output"), (1, "pass")]
    (summary,) = json.loads(kgb("report", "--db", str(db), "--json").stdout)["summary"]
    assert summary["correct"] == 1 and summary["tokens"] == 300


def test_a_malformed_answer_gets_a_clear_verdict(shared_run):
    _, _, rows = shared_run
    (row,) = rows["aten.sin"]
    assert row["verdict"] == "screen_rejected" and "holds no code" in row["message"]


def test_429_then_success_is_retried(shared_run):
    _, requests, rows = shared_run
    assert len(requests["aten.exp"]) == 2
    (row,) = rows["aten.exp"]
    assert row["verdict"] == "pass"


def test_missing_usage_is_estimated_and_marked(shared_run):
    _, _, rows = shared_run
    (row,) = rows["aten.cos"]
    generation = json.loads(row["generation"])
    assert generation["tokens_estimated"] is True
    assert row["prompt_tokens"] == len(generation["prompt"]) // 4


def test_an_endpoint_that_keeps_failing_is_recorded_and_the_sweep_goes_on(shared_run):
    _, requests, rows = shared_run
    (neg,) = rows["aten.neg"]
    assert neg["verdict"] == "no_candidate"
    assert "InternalServerError" in neg["message"]
    assert len(requests["aten.neg"]) == 3  # the first try and max_retries = 2 more
    assert [row["verdict"] for row in rows["aten.abs"]] == ["pass"]


def test_a_missing_api_key_is_a_user_error(tmp_path):
    with ChatServer([]) as server:
        done, _ = _run(tmp_path, server, ["aten.relu"], env_key="SOME_OTHER_VARIABLE")
    assert done.returncode == 2 and "KGB_TEST_LLM_KEY is not set" in done.stderr
    assert server.requests == []


def test_anthropic_provider_through_its_sdk(tmp_path, registry):
    kernel = registry.operator("aten.relu").reference_kernel()
    with ChatServer([Reply(_answer(kernel), usage=(321, 123))]) as server:
        config = tmp_path / "run.toml"
        root = server.base_url.rsplit("/v1", 1)[0]
        config.write_text(
            f'[run]\nbackend = "cpu"\n[method]\nname = "llm"\nprovider = "anthropic"\n'
            f'base_url = "{root}"\nmodel = "claude-test"\napi_key_env = "KGB_TEST_LLM_KEY"\n'
            f'[evaluation]\nseeds = [0]\ntiming = false\n')
        db = tmp_path / "r.db"
        done = kgb("run", "--config", str(config), "--db", str(db), "--op", "aten.relu",
                   env={"KGB_TEST_LLM_KEY": "sk-loopback"})
    assert done.returncode == 0, done.stderr
    (row,) = _rows(db)
    assert row["verdict"] == "pass", row["message"]
    assert (row["prompt_tokens"], row["completion_tokens"]) == (321, 123)
    assert server.requests[0]["model"] == "claude-test"
    assert server.requests[0]["temperature"] == 0.0
