"""``kgb serve``: the evaluation service, over HTTP, for training loops and other clients.

Routes (JSON in and out; every error is a JSON object ``{"error": ..., "request_id": ...}``
with its status):

- ``POST /v1/evaluate`` ``{"op", "source", "timing"?, "backend"?, "seed"?}``: the same object
  ``kgb eval --json`` prints, plus ``request_id``; 200 whatever the verdict;
- ``POST /v1/evaluate/batch`` ``{"requests": [...]}``: ``{"results": [...]}`` in order;
- ``GET /v1/health``: the backend, the queue, the sandbox (no token needed);
- ``GET /v1/ops``: the operator ids.

Admission is bounded: past ``max_queue`` evaluations waiting or running, a request gets 429
with ``Retry-After``. A request waits at most ``request_timeout_s`` (504; an evaluation
already running finishes and is still recorded). Bodies past ``max_request_bytes`` get 413, as
does a source past ``max_source_bytes``. With a token, every route but health needs
``Authorization: Bearer <token>``. With a store, every result is committed the moment it
exists, labelled with its request id, so a killed service loses only what was in flight.

Starlette does the routing and uvicorn the serving (the optional extra
``kernelgenbench[serve]``): both well kept, and an HTTP server of our own would be code to
get wrong. The evaluation itself is ``kgb_core.service.EvaluationService``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import queue
import signal
import sys
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from kgb_core.errors import UserError
from kgb_core.evaluation.results import EvalResult
from kgb_core.service import EvalRequest, EvaluationService, as_request

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@dataclass
class ServeLimits:
    max_queue: int = 64
    max_batch: int = 64
    max_request_bytes: int = 4 << 20
    max_source_bytes: int = 256 << 10
    request_timeout_s: float = 900.0


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class Admission:
    """How many evaluations are waiting or running, against the limit; and how long the
    queue ahead would take, for ``Retry-After``."""

    def __init__(self, limit: int, slots: int) -> None:
        self.limit, self.slots = limit, max(1, slots)
        self.pending = 0
        self._lock = threading.Lock()
        self._mean_s = 5.0  # until the first evaluation is done

    def admit(self, count: int) -> None:
        with self._lock:
            if self.pending + count > self.limit:
                raise HTTPError(429, f"the queue is full ({self.pending} evaluations waiting "
                                     f"or running, at most {self.limit}); retry later",
                                {"Retry-After": str(self.retry_after())})
            self.pending += count

    def done(self, duration_s: float) -> None:
        with self._lock:
            self.pending -= 1
            self._mean_s = 0.8 * self._mean_s + 0.2 * max(duration_s, 0.0)

    def retry_after(self) -> int:
        return max(1, math.ceil(self._mean_s * max(self.pending, 1) / self.slots))


class Recorder:
    """Each result into the store as it is done, from one thread of its own (SQLite wants one
    connection per thread), committed at once."""

    def __init__(self, path: str, plan: dict[str, Any], environment: dict[str, Any]) -> None:
        self._items: "queue.Queue[tuple[str, EvalResult] | None]" = queue.Queue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(path, plan, environment),
                                        daemon=True, name="kgb-serve-store")
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _run(self, path: str, plan: dict[str, Any], environment: dict[str, Any]) -> None:
        from kgb_core.candidates import Candidate
        from kgb_core.store import ResultStore

        try:
            store = ResultStore(path)
            run_id = store.start_run(plan, environment)
        except BaseException as error:  # noqa: BLE001 - raised in the starting thread
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        sample = 0
        while True:
            item = self._items.get()
            if item is None:
                store.finish_run(run_id)
                store.close()
                return
            request_id, result = item
            result.sample = sample  # one row per evaluation of the run
            store.record(run_id, result.op.partition(".")[0], result,
                         Candidate(source="", sample=sample,
                                   generation={"request_id": request_id}))
            sample += 1

    def record(self, request_id: str, result: EvalResult) -> None:
        # A copy: the row's sample is set here, and the caller's result is also the answer.
        self._items.put((request_id, EvalResult.from_dict(result.to_dict())))

    def close(self) -> None:
        self._items.put(None)
        self._thread.join()


def build_app(service: EvaluationService, limits: ServeLimits, *, token: str | None = None,
              recorder: Recorder | None = None) -> Any:
    """The Starlette application serving ``service``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    admission = Admission(limits.max_queue, service.slots(timing=False))
    backend_name = service.backend.name

    def error_response(error: HTTPError, request_id: str) -> JSONResponse:
        return JSONResponse({"error": error.message, "request_id": request_id},
                            status_code=error.status,
                            headers={**error.headers, "X-Request-Id": request_id})

    def authorize(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise HTTPError(401, "a bearer token is required (Authorization: Bearer <token>)",
                            {"WWW-Authenticate": "Bearer"})

    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limits.max_request_bytes:
            raise HTTPError(413, f"the request is {declared} bytes; at most "
                                 f"{limits.max_request_bytes}")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limits.max_request_bytes:
                raise HTTPError(413, f"the request is over {limits.max_request_bytes} bytes")
        try:
            return json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise HTTPError(400, f"the body is not JSON: {error}") from None

    def to_request(item: Any) -> EvalRequest:
        if not isinstance(item, dict):
            raise HTTPError(400, "an evaluation request is a JSON object with op and source")
        if not isinstance(item.get("source"), str):
            raise HTTPError(400, "'source' must be a string")
        if len(item["source"].encode()) > limits.max_source_bytes:
            raise HTTPError(413, f"the source is over {limits.max_source_bytes} bytes")
        fields = dict(item)
        backend = fields.pop("backend", None)
        if backend is not None and backend != backend_name:
            raise HTTPError(400, f"this service evaluates on backend {backend_name!r}, not "
                                 f"{backend!r}")
        try:  # the fields' own checks, as the Python API makes them
            evaluation = as_request(fields)
        except UserError as error:
            raise HTTPError(400, str(error)) from None
        try:
            service.registry.operator(evaluation.op)
        except UserError as error:
            raise HTTPError(404, str(error)) from None
        return evaluation

    def start(evaluation: EvalRequest, request_id: str) -> "Future[EvalResult]":
        started = time.monotonic()
        try:
            future = service.submit(evaluation)
        except Exception as error:  # a pool that failed to start, a service shutting down
            admission.done(0.0)
            raise HTTPError(503, f"the evaluation could not be queued: {error}") from None

        def finished(done: "Future[EvalResult]") -> None:
            admission.done(time.monotonic() - started)
            if recorder is not None and not done.cancelled() and done.exception() is None:
                recorder.record(request_id, done.result())

        future.add_done_callback(finished)
        return future

    async def wait(futures: list["Future[EvalResult]"]) -> list[EvalResult]:
        try:
            return await asyncio.wait_for(
                asyncio.gather(*(asyncio.shield(asyncio.wrap_future(f)) for f in futures)),
                timeout=limits.request_timeout_s)
        except asyncio.TimeoutError:
            for future in futures:
                future.cancel()  # one still queued is dropped; a running one finishes
            raise HTTPError(504, f"no verdict within {limits.request_timeout_s:g} s; an "
                                 f"evaluation already running finishes and is recorded") from None

    def answer(result: EvalResult, request_id: str) -> dict[str, Any]:
        return {**result.to_dict(), "request_id": request_id}

    async def evaluate(request: Request) -> JSONResponse:
        request_id = uuid.uuid4().hex
        try:
            authorize(request)
            evaluation = to_request(await read_json(request))
            admission.admit(1)
            (result,) = await wait([start(evaluation, request_id)])
        except HTTPError as error:
            return error_response(error, request_id)
        return JSONResponse(answer(result, request_id), headers={"X-Request-Id": request_id})

    async def evaluate_batch(request: Request) -> JSONResponse:
        request_id = uuid.uuid4().hex
        try:
            authorize(request)
            body = await read_json(request)
            items = body.get("requests") if isinstance(body, dict) else None
            if not isinstance(items, list) or not items:
                raise HTTPError(400, "a batch is {\"requests\": [...]} with at least one request")
            if len(items) > limits.max_batch:
                raise HTTPError(413, f"a batch holds at most {limits.max_batch} requests, not "
                                     f"{len(items)}")
            evaluations = [to_request(item) for item in items]
            admission.admit(len(evaluations))
            ids = [f"{request_id}-{index}" for index in range(len(evaluations))]
            futures: list["Future[EvalResult]"] = []
            try:
                for evaluation, evaluation_id in zip(evaluations, ids):
                    futures.append(start(evaluation, evaluation_id))
            except HTTPError:  # the failed one gave its place back; so do those not started
                for _ in range(len(evaluations) - len(futures) - 1):
                    admission.done(0.0)
                raise
            results = await wait(futures)
        except HTTPError as error:
            return error_response(error, request_id)
        return JSONResponse({"request_id": request_id,
                             "results": [answer(r, i) for r, i in zip(results, ids)]},
                            headers={"X-Request-Id": request_id})

    from kgb_core.evaluation.sandbox import find_sandbox

    sandbox = find_sandbox().name  # what every runner of this service runs in

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "backend": service.backend.label,
                             "queue": {"pending": admission.pending, "limit": admission.limit},
                             "sandbox": sandbox, "recording": recorder is not None,
                             "workers": service.usage()})

    async def operators(request: Request) -> JSONResponse:
        request_id = uuid.uuid4().hex
        try:
            authorize(request)
        except HTTPError as error:
            return error_response(error, request_id)
        return JSONResponse({"operators": service.operators()})

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"no route {request.method} {request.url.path}"},
                            status_code=getattr(exc, "status_code", 404))

    routes = [Route("/v1/evaluate", evaluate, methods=["POST"]),
              Route("/v1/evaluate/batch", evaluate_batch, methods=["POST"]),
              Route("/v1/health", health, methods=["GET"]),
              Route("/v1/ops", operators, methods=["GET"])]
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})


def serve(service: EvaluationService, limits: ServeLimits, *, host: str, port: int,
          token: str | None, db: str | None, announce: Any = print) -> None:
    """Serve until interrupted; the store, if any, is closed after the last result."""
    try:
        import uvicorn
    except ImportError:
        raise UserError("kgb serve needs Starlette and uvicorn: pip install "
                        "'kernelgenbench[serve]'") from None
    # Both pools start now, not on the first request: a pool's judges take seconds to start,
    # and the server's event loop must not wait on them.
    service.start()
    recorder = None
    if db:
        from kgb_core.environment import describe_environment

        recorder = Recorder(db, {"method": "serve", "backend": service.backend.name,
                                 "emulates": service.backend.emulates or None},
                            describe_environment(service.registry, {}))
    app = build_app(service, limits, token=token, recorder=recorder)
    if host not in LOOPBACK:
        announce(f"warning: serving on {host}, reachable beyond this machine"
                 + ("" if token else ", with no token (--token-env)"))
    announce(f"kgb serve: backend {service.backend.label} on http://{host}:{port}/v1/ "
             f"(queue {limits.max_queue}{', recording to ' + db if db else ''})")
    # uvicorn stops on SIGTERM and then raises it again for the handler it found: make that
    # one an exit, so the store's run is finished below rather than the process just ending.
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        signal.signal(signal.SIGTERM, previous)
        service.close()
        if recorder is not None:
            recorder.close()


def _exit_on_signal(signum: int, frame: Any) -> None:
    sys.exit(128 + signum)
