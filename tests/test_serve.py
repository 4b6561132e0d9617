"""``kgb serve`` as a client sees it: a real server process on 127.0.0.1 (CPU backend), real
HTTP, real candidates, a real store; the service killed with SIGKILL mid-batch and started
again on the same store."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kgb_core.plugins import load_registry

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
# A right candidate that is quick to check and time in the interpreter: the reference kernel.
RIGHT = load_registry().operator("aten.neg").reference_kernel()
CHEAT = (ROOT / "tests" / "adversarial" / "staged_answer_copied_by_triton.py").read_text()
# Hangs before any launch: the runner is killed at the candidate's timeout.
HANGS = "def kernel(x):\n    while True:\n        pass\n"
TOKEN = "s3cret-for-tests"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``kgb serve`` in a process of its own, on a free loopback port."""

    def __init__(self, tmp_path: Path, *args: str, token: str | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "KGB_TEST_TOKEN": token or ""}
        command = [sys.executable, "-m", "kgb_core", "serve", "--backend", "cpu",
                   "--port", str(self.port), *args]
        if token:
            command += ["--token-env", "KGB_TEST_TOKEN"]
        self.log = tmp_path / f"serve-{self.port}.log"
        self.process = subprocess.Popen(command, env=env, stdout=self.log.open("w"),
                                        stderr=subprocess.STDOUT, cwd=tmp_path,
                                        start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if request(self, "GET", "/v1/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"kgb serve did not start: {self.log.read_text()}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """The server and its judges and runners, as a machine's OOM killer or an operator
        would end them."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
        self.process.wait(timeout=60)


def request(server: Server, method: str, path: str, body: Any = None, *, token: str | None = None,
            raw: bytes | None = None, timeout: float = 300) -> tuple[int, dict[str, str], Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    call = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    started = Server(tmp, "--db", str(tmp / "served.db"), "--timeout", "60", token=TOKEN)
    yield started
    started.kill(signal.SIGTERM)


def test_a_right_candidate_passes_and_a_cheat_gets_its_verdict(server):
    status, headers, right = request(server, "POST", "/v1/evaluate",
                                     {"op": "aten.neg", "source": RIGHT, "timing": False},
                                     token=TOKEN)
    assert status == 200 and right["verdict"] == "pass", right
    assert right["request_id"] == headers["x-request-id"]
    assert right["op"] == "aten.neg" and right["cases"]  # kgb eval --json's object
    status, _, cheat = request(server, "POST", "/v1/evaluate",
                               {"op": "aten.t", "source": CHEAT, "timing": False, "seed": 5},
                               token=TOKEN)
    assert status == 200 and cheat["verdict"] == "reference_used", cheat
    assert {case.get("seed") for case in cheat["cases"]} <= {5, None}


def test_a_timed_request_comes_back_with_its_speedup(server):
    status, _, timed = request(server, "POST", "/v1/evaluate",
                               {"op": "aten.neg", "source": RIGHT, "backend": "cpu"},
                               token=TOKEN)
    assert status == 200 and timed["verdict"] == "pass", timed
    assert timed["speedup"] and timed["timings"]


@pytest.mark.parametrize("body, raw, status, says", [
    (None, b"{not json", 400, "not JSON"),
    ([1, 2], None, 400, "JSON object"),
    ({"op": "aten.softmax"}, None, 400, "'source' must be a string"),
    ({"op": "aten.no_such_op", "source": "x"}, None, 404, "unknown operator"),
    ({"op": "softmax", "source": "x"}, None, 400, "looks like <source>.<name>"),
    ({"op": "aten.softmax", "source": "x", "extra": 1}, None, 400, "unknown field"),
    ({"op": "aten.softmax", "source": "x", "seed": -1}, None, 400, "seed"),
    ({"op": "aten.softmax", "source": "x", "timing": "yes"}, None, 400, "timing"),
    ({"op": "aten.softmax", "source": "x", "backend": "nvidia"}, None, 400, "backend 'cpu'"),
    ({"op": "aten.softmax", "source": "#" * (300 << 10)}, None, 413, "source is over"),
])
def test_a_malformed_request_gets_a_json_error_with_its_status(server, body, raw, status, says):
    got, _, answer = request(server, "POST", "/v1/evaluate", body, raw=raw, token=TOKEN)
    assert got == status and says in answer["error"], answer
    assert answer["request_id"]


def test_an_oversize_body_and_an_unknown_route_get_errors_and_the_service_goes_on(server):
    # Refused on its declared length, before the body is read (a client still sending it may
    # see the connection closed under it, as HTTP allows).
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.putrequest("POST", "/v1/evaluate")
    connection.putheader("Authorization", f"Bearer {TOKEN}")
    connection.putheader("Content-Length", str(5 << 20))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and "bytes" in json.loads(response.read())["error"]
    connection.close()
    got, _, answer = request(server, "GET", "/v2/anything", token=TOKEN)
    assert got == 404 and "no route" in answer["error"]
    assert request(server, "GET", "/v1/health")[0] == 200


def test_the_token_is_required_everywhere_but_health(server):
    got, headers, answer = request(server, "POST", "/v1/evaluate",
                                   {"op": "aten.neg", "source": RIGHT})
    assert got == 401 and headers["www-authenticate"] == "Bearer", answer
    assert request(server, "GET", "/v1/ops", token="wrong")[0] == 401
    got, _, listing = request(server, "GET", "/v1/ops", token=TOKEN)
    assert got == 200 and "aten.softmax" in listing["operators"]
    assert len(listing["operators"]) >= 300
    got, _, health = request(server, "GET", "/v1/health")
    assert got == 200 and health["backend"] == "cpu" and health["recording"] is True


def test_a_batch_answers_in_order_and_concurrent_clients_are_all_served(server):
    got, _, batch = request(server, "POST", "/v1/evaluate/batch", {"requests": [
        {"op": "aten.t", "source": CHEAT, "timing": False},
        {"op": "aten.neg", "source": RIGHT, "timing": False}]}, token=TOKEN)
    assert got == 200, batch
    assert [r["verdict"] for r in batch["results"]] == ["reference_used", "pass"]
    assert len({r["request_id"] for r in batch["results"]}) == 2
    answers: list[Any] = []

    def client(source: str, op: str) -> None:
        answers.append((op, request(server, "POST", "/v1/evaluate",
                                    {"op": op, "source": source, "timing": False},
                                    token=TOKEN)))

    clients = [threading.Thread(target=client, args=pair) for pair in
               [(RIGHT, "aten.neg"), (CHEAT, "aten.t")] * 2]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    verdicts = sorted((op, status, body["verdict"]) for op, (status, _, body) in answers)
    assert verdicts == [("aten.neg", 200, "pass")] * 2 + [("aten.t", 200, "reference_used")] * 2
    # Health tells what each worker did: these six checks ran on the checks pool's workers.
    workers = request(server, "GET", "/v1/health")[2]["workers"]
    assert set(workers) == {"checks", "timings"}
    assert sum(slot["jobs"] for slot in workers["checks"]) >= 6
    assert all(slot["worker_starts"] >= 1 for slot in workers["checks"])


def test_every_evaluation_is_recorded_with_its_request_id(server, tmp_path_factory):
    got, _, answer = request(server, "POST", "/v1/evaluate",
                             {"op": "aten.neg", "source": RIGHT, "timing": False},
                             token=TOKEN)
    assert got == 200
    store = Path(server.log).parent / "served.db"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = _rows(store)
        if answer["request_id"] in {row[2] for row in rows}:
            break
        time.sleep(0.2)
    assert answer["request_id"] in {row[2] for row in rows}


def _rows(store: Path) -> list[tuple[str, str, str]]:
    connection = sqlite3.connect(store)
    try:
        return [(op, verdict, json.loads(generation)["request_id"]) for op, verdict, generation
                in connection.execute("SELECT op, verdict, generation FROM results")]
    finally:
        connection.close()


def test_a_full_queue_gets_429_with_retry_after_and_a_slow_request_504(tmp_path):
    # One check worker: the queue's limit, not the workers', is what refuses (and a judge
    # fewer to start, seconds of CPU on CI's two cores).
    server = Server(tmp_path, "--max-queue", "1", "--timeout", "8", "--request-timeout", "3",
                    "--check-workers", "1")
    try:
        slow: list[Any] = []
        hanging = threading.Thread(target=lambda: slow.append(request(
            server, "POST", "/v1/evaluate", {"op": "aten.neg", "source": HANGS,
                                             "timing": False})))
        hanging.start()
        deadline = time.monotonic() + 30
        while request(server, "GET", "/v1/health")[2]["queue"]["pending"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        got, headers, answer = request(server, "POST", "/v1/evaluate",
                                       {"op": "aten.neg", "source": RIGHT, "timing": False})
        assert got == 429 and int(headers["retry-after"]) >= 1, answer
        hanging.join()
        status, _, late = slow[0]
        assert status == 504 and "no verdict within 3 s" in late["error"], late
        # The hanging candidate still ends (its runner killed at 8 s), and then the queue
        # takes new work again (a source the screen refuses: a verdict within the 3 s).
        deadline = time.monotonic() + 60
        while request(server, "GET", "/v1/health")[2]["queue"]["pending"]:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        got, _, answer = request(server, "POST", "/v1/evaluate",
                                 {"op": "aten.neg", "source": "import os\n" + RIGHT,
                                  "timing": False})
        assert got == 200 and answer["verdict"] == "screen_rejected", answer
    finally:
        server.kill()


def test_a_killed_service_loses_no_recorded_result_and_restarts_on_its_store(tmp_path):
    store = tmp_path / "kept.db"
    server = Server(tmp_path, "--db", str(store))
    requests = {"requests": [{"op": "aten.neg", "source": RIGHT, "timing": False},
                             {"op": "aten.t", "source": CHEAT, "timing": False}] * 12}
    batch = threading.Thread(target=lambda: _ignore_errors(
        lambda: request(server, "POST", "/v1/evaluate/batch", requests)))
    batch.start()
    deadline = time.monotonic() + 120
    while not store.exists() or len(_rows(store)) < 2:
        assert time.monotonic() < deadline, server.log.read_text()
        time.sleep(0.1)
    server.kill(signal.SIGKILL)  # mid-batch: the rest of it is lost, what was recorded is not
    batch.join()
    kept = _rows(store)
    assert 2 <= len(kept) < 24
    assert {verdict for op, verdict, _ in kept if op == "aten.t"} <= {"reference_used"}
    assert {verdict for op, verdict, _ in kept if op == "aten.neg"} <= {"pass"}
    # Started again on the store for one request: one check worker answers it (a judge fewer
    # to start); the killed service had the default two, recording side by side.
    again = Server(tmp_path, "--db", str(store), "--check-workers", "1")
    try:
        got, _, answer = request(again, "POST", "/v1/evaluate",
                                 {"op": "aten.neg", "source": RIGHT, "timing": False})
        assert got == 200 and answer["verdict"] == "pass"
    finally:
        again.kill(signal.SIGTERM)
    after = _rows(store)
    assert after[:len(kept)] == kept and answer["request_id"] in {row[2] for row in after}
    connection = sqlite3.connect(store)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finished = [row[0] for row in connection.execute("SELECT finished_at FROM runs")]
    finally:
        connection.close()
    assert finished[0] is None and finished[1]  # the killed run, the one stopped with SIGTERM


def _ignore_errors(call: Any) -> None:
    try:
        call()
    except OSError:  # the server was killed under the request
        pass
