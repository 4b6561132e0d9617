"""The agent method against a loopback OpenAI-protocol server: feedback turns, the best kernel,
turns to first pass and token sums recorded exactly; the answer cache and the run budget."""

from __future__ import annotations

import json
import sqlite3

from chat_server import ChatServer, Reply
from conftest import KERNELS, kgb


def _answer(code: str) -> str:
    return f"```python\n{code}```"


def _config(tmp_path, server, method, extra=""):
    config = tmp_path / "run.toml"
    config.write_text(
        f'[run]\nbackend = "cpu"\n{extra}'
        f'[method]\nname = "{method}"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
        f'api_key_env = "KGB_TEST_LLM_KEY"\nmax_retries = 0\n'
        + ('max_turns = 3\nimprove_after_pass = false\n' if method == "agent" else "")
        + '[evaluation]\nseeds = [0]\ntiming = false\n')
    return config


def _run(config, db, *ops):
    args = ["run", "--config", str(config), "--db", str(db)]
    for op in ops:
        args += ["--op", op]
    return kgb(*args, env={"KGB_TEST_LLM_KEY": "sk-loopback"})


def test_agent_gets_the_verdict_back_and_keeps_the_passing_kernel(tmp_path, registry):
    wrong = (KERNELS / "add_wrong_values.py").read_text()
    right = registry.operator("aten.add").reference_kernel()
    script = [Reply(_answer(wrong), usage=(1000, 200)), Reply(_answer(right), usage=(1500, 300))]
    db = tmp_path / "r.db"
    with ChatServer(script) as server:
        done = _run(_config(tmp_path, server, "agent"), db, "aten.add")
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "wrong_output" in feedback and "outside rtol" in feedback
    assert server.requests[1]["messages"][1]["role"] == "assistant"
    (row,) = sqlite3.connect(db).execute(
        "SELECT verdict, prompt_tokens, completion_tokens, generation FROM results").fetchall()
    verdict, prompt_tokens, completion_tokens, generation = row
    assert verdict == "pass" and (prompt_tokens, completion_tokens) == (2500, 500)
    record = json.loads(generation)
    assert [t["verdict"] for t in record["turns"]] == ["wrong_output", "pass"]
    assert record["first_pass_turn"] == 2
    (summary,) = json.loads(kgb("report", "--db", str(db), "--json").stdout)["summary"]
    assert summary["mean_turns_to_pass"] == 2 and summary["tokens_per_solved"] == 3000
    text = kgb("report", "--db", str(db)).stdout
    assert "turns to pass" in text and "tokens/attempted" in text


def test_a_rerun_takes_answers_from_the_cache_and_pays_nothing(tmp_path, registry):
    right = registry.operator("aten.neg").reference_kernel()
    db = tmp_path / "r.db"
    with ChatServer([Reply(_answer(right), usage=(700, 70))]) as server:
        config = _config(tmp_path, server, "llm")
        assert _run(config, db, "aten.neg").returncode == 0
        again = _run(config, db, "aten.neg")  # a new run of the same plan, same store
    assert again.returncode == 0, again.stderr
    assert len(server.requests) == 1, "the second run must not call the endpoint"
    rows = sqlite3.connect(db).execute(
        "SELECT run_id, verdict, generation FROM results ORDER BY id").fetchall()
    assert [r[:2] for r in rows] == [(1, "pass"), (2, "pass")]
    assert json.loads(rows[1][2])["cached"] is True


def test_a_token_budget_stops_the_run_cleanly_and_says_so(tmp_path, registry):
    script = [Reply(_answer(registry.operator(op).reference_kernel()), usage=(600, 100))
              for op in ("aten.neg", "aten.abs", "aten.exp")]
    db = tmp_path / "r.db"
    with ChatServer(script) as server:
        done = _run(_config(tmp_path, server, "llm", extra="token_budget = 1000\n"), db,
                    "aten.neg", "aten.abs", "aten.exp")
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2  # 700 tokens after the first op, 1400 after the second
    assert "budget reached (1400 tokens of a 1000-token budget); 1 operators not attempted" \
        in done.stderr
    assert "stopped: budget reached" in done.stdout
