"""The llm method against a real loopback server speaking the OpenAI protocol: verdicts, token
counts, costs and retries recorded exactly."""

from __future__ import annotations

import json
import sqlite3

from chat_server import ChatServer, Reply
from conftest import KERNELS, kgb


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


def test_a_right_answer_passes_with_exact_tokens_and_cost(tmp_path, registry):
    kernel = registry.operator("aten.relu").reference_kernel()
    with ChatServer([Reply(_answer(kernel), usage=(1234, 567))]) as server:
        done, db = _run(tmp_path, server, ["aten.relu"])
    assert done.returncode == 0, done.stderr
    (row,) = _rows(db)
    assert row["verdict"] == "pass"
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1234, 567)
    assert abs(row["cost_usd"] - (1234 * 2.0 + 567 * 10.0) / 1e6) < 1e-12
    generation = json.loads(row["generation"])
    assert "aten.relu" in generation["prompt"] and generation["tokens_estimated"] is False
    assert "It handles strides." in generation["answer"]
    (request,) = server.requests
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


def test_a_malformed_answer_gets_a_clear_verdict(tmp_path):
    with ChatServer([Reply("Sorry, I can not write that kernel.")]) as server:
        done, db = _run(tmp_path, server, ["aten.relu"])
    assert done.returncode == 0, done.stderr
    (row,) = _rows(db)
    assert row["verdict"] == "screen_rejected" and "holds no code" in row["message"]


def test_429_then_success_is_retried(tmp_path, registry):
    kernel = registry.operator("aten.neg").reference_kernel()
    with ChatServer([Reply(status=429), Reply(_answer(kernel))]) as server:
        done, db = _run(tmp_path, server, ["aten.neg"])
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2
    assert _rows(db)[0]["verdict"] == "pass"


def test_missing_usage_is_estimated_and_marked(tmp_path, registry):
    kernel = registry.operator("aten.neg").reference_kernel()
    with ChatServer([Reply(_answer(kernel), usage=None)]) as server:
        done, db = _run(tmp_path, server, ["aten.neg"])
    assert done.returncode == 0, done.stderr
    (row,) = _rows(db)
    generation = json.loads(row["generation"])
    assert generation["tokens_estimated"] is True
    assert row["prompt_tokens"] == len(generation["prompt"]) // 4


def test_an_endpoint_that_keeps_failing_is_recorded_and_the_sweep_goes_on(tmp_path, registry):
    kernel = registry.operator("aten.abs").reference_kernel()
    script = [Reply(status=500)] * 3 + [Reply(_answer(kernel))]
    with ChatServer(script) as server:
        done, db = _run(tmp_path, server, ["aten.neg", "aten.abs"])
    assert done.returncode == 0, done.stderr
    rows = {r["op"]: r for r in _rows(db)}
    assert rows["aten.neg"]["verdict"] == "no_candidate"
    assert "InternalServerError" in rows["aten.neg"]["message"]
    assert rows["aten.abs"]["verdict"] == "pass"


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
