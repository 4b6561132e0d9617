"""A paper-scale KernelGenBench run, simulated: how long, and how busy are the GPUs?

``python benchmarks/scale_simulation.py`` models 210 operators x 4 methods (two one-shot with
k samples, two agents with up to ``--max-turns`` turns) on 6 chips, each a machine of N GPUs,
for N = 1, 8 and 64, and prints the expected wall time and GPU utilisation of each. It is a
discrete-event simulation of what ``kgb run`` does (kgb_core/sweep.py, docs/scale-out.md):

- per chip, the four methods' sweeps run one after another (one sweep owns the chip's GPUs;
  two sweeps pinned to the same GPUs would time kernels side by side);
- a sweep keeps ``concurrency`` operators in generation at once; a one-shot method asks for
  its k samples one after another (as ``kgb_methods/llm.py`` does), then queues k candidates;
  an agent's turn waits for its evaluation (first in the queue) before the next turn;
- generation stops running ahead when ``2 x GPUs + concurrency`` candidates wait;
- one worker per GPU, one candidate at a time; all six chips share one model endpoint, which
  answers at most ``--endpoint-limit`` requests at once;
- a baseline row: the loop kgb had before the queue (generate, then evaluate, one at a time,
  one GPU a chip).

Per-candidate costs are measured, not assumed (``--costs h200`` or ``cpu``; sources below);
model latencies and pass rates are assumptions, printed with the result: change them with the
flags. Every chip is given the H200's costs: the other vendors' chips are not measured.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Generator

# Measured per-candidate costs, seconds.
COSTS = {
    "h200": {
        # benchmarks/results/h200-aten-reference-report.json: 31 ATen reference kernels, all
        # passing every case, timed (CUDA events, L2 flush; small and large cases): the run
        # went from 16:08:28 to 16:14:21, 353 s, one worker start (7.7 s) included.
        "timed_pass_s": (353.0 - 7.7) / 31,
        # results/h200-worker-overhead.txt (0.684 s) and -188f1cd.txt (0.620 s): a reused
        # worker, aten.neg, one seed, no timing. A failing candidate stops at its first failing
        # case and is not timed; taken as this cost.
        "failed_s": (0.684 + 0.620) / 2,
        # the same files: a fresh worker per candidate, 7.726 s and 9.758 s; paid after every
        # verdict that retires the worker (crash, timeout, runtime error, tampering...).
        "fresh_worker_s": (7.726 + 9.758) / 2,
        "source": "H200 (benchmarks/results/h200-*.txt, h200-aten-reference-report.json)",
    },
    "cpu": {
        # benchmarks/results/cpu-queue-busy-*.txt: device s/candidate, reference kernels
        # timed in the interpreter, one worker (0.49-1.03 s over four runs; 0.57 taken).
        "timed_pass_s": 0.57,
        # benchmarks/README.md, 2-core CPU machine with the probes: reused 0.06 s, fresh 3.69 s.
        "failed_s": 0.06,
        "fresh_worker_s": 3.69,
        "source": "2-core CPU, Triton interpreter (benchmarks/README.md, results/cpu-*)",
    },
}


@dataclass
class Assumptions:
    ops: int = 210
    oneshot_methods: int = 2
    agent_methods: int = 2
    samples: int = 5
    max_turns: int = 5
    stop_at_pass: bool = False  # kgb's agent default: improve_after_pass = true
    oneshot_latency_s: float = 60.0
    turn_latency_s: float = 90.0
    latency_sigma: float = 0.5  # lognormal spread of a model answer's latency
    oneshot_pass: float = 0.3
    turn_pass: float = 0.3
    retire_fraction: float = 0.3  # of failing candidates, those that retire the worker
    hang_fraction: float = 0.01  # of failing candidates, those that hang to the timeout
    timeout_s: float = 300.0
    chips: int = 6
    endpoint_limit: int = 512
    concurrency_per_gpu: int = 16


@dataclass
class Chip:
    name: str
    gpus: int
    concurrency: int
    free_gpus: int = 0
    evals: list[tuple[int, int, float, Any]] = field(default_factory=list)
    free_threads: int = 0
    todo: deque = field(default_factory=deque)
    sweeps: deque = field(default_factory=deque)
    waiting_finals: int = 0
    running_jobs: int = 0
    outstanding_evals: int = 0
    busy_s: float = 0.0
    finished_at: float = 0.0
    evaluations: int = 0
    llm_calls: int = 0


class Simulation:
    def __init__(self, assume: Assumptions, costs: dict[str, float], gpus: int,
                 concurrency: int | None, seed: int) -> None:
        self.a, self.costs = assume, costs
        self.random = random.Random(seed)
        self.now = 0.0
        self.model_s = 0.0  # seconds of model answers, all requests together
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self.sequence = itertools.count()
        self.endpoint_free = assume.endpoint_limit
        self.endpoint_waiting: deque = deque()
        per_chip = concurrency or assume.concurrency_per_gpu * gpus
        self.chips = [Chip(f"chip{i}", gpus, per_chip) for i in range(assume.chips)]
        for chip in self.chips:
            chip.free_gpus, chip.free_threads = gpus, per_chip
            chip.sweeps = deque(["oneshot"] * assume.oneshot_methods
                                + ["agent"] * assume.agent_methods)

    # -- time ------------------------------------------------------------------------------
    def at(self, delay: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (self.now + delay, next(self.sequence), action))

    def latency(self, mean: float) -> float:
        sigma = self.a.latency_sigma
        seconds = self.random.lognormvariate(math.log(mean) - sigma ** 2 / 2, sigma)
        self.model_s += seconds
        return seconds

    def eval_cost(self, passed: bool) -> float:
        if passed:
            return self.costs["timed_pass_s"]
        draw = self.random.random()
        if draw < self.a.hang_fraction:
            return self.a.timeout_s + self.costs["fresh_worker_s"]
        if draw < self.a.hang_fraction + self.a.retire_fraction:
            return self.costs["failed_s"] + self.costs["fresh_worker_s"]
        return self.costs["failed_s"]

    # -- jobs are generators: ("llm", mean) and ("eval", priority, passed) block,
    #    ("submit", passed) queues a final candidate and goes on ------------------------------
    def oneshot(self) -> Generator[tuple, Any, None]:
        for _ in range(self.a.samples):
            yield ("llm", self.a.oneshot_latency_s)
        for _ in range(self.a.samples):
            yield ("submit", self.random.random() < self.a.oneshot_pass)

    def agent(self) -> Generator[tuple, Any, None]:
        best = False
        for _ in range(self.a.max_turns):
            yield ("llm", self.a.turn_latency_s)
            passed = self.random.random() < self.a.turn_pass
            yield ("eval", 0, passed)
            best = best or passed
            if passed and self.a.stop_at_pass:
                break
        yield ("submit", best)  # the sweep evaluates the best kernel for the record

    def step(self, chip: Chip, job: Generator, value: Any = None) -> None:
        try:
            request = job.send(value)
        except StopIteration:
            chip.running_jobs -= 1
            chip.free_threads += 1
            self.fill(chip)
            return
        kind = request[0]
        if kind == "llm":
            chip.llm_calls += 1
            self.ask_endpoint(lambda: self.at(self.latency(request[1]),
                                              lambda: self.endpoint_done(chip, job)))
        elif kind == "eval":
            self.queue_eval(chip, request[1], request[2], lambda: self.step(chip, job))
        else:
            chip.waiting_finals += 1
            self.queue_eval(chip, 1, request[1], lambda: self.final_done(chip))
            self.step(chip, job)

    def ask_endpoint(self, start: Callable[[], None]) -> None:
        if self.endpoint_free:
            self.endpoint_free -= 1
            start()
        else:
            self.endpoint_waiting.append(start)

    def endpoint_done(self, chip: Chip, job: Generator) -> None:
        if self.endpoint_waiting:
            self.endpoint_waiting.popleft()()
        else:
            self.endpoint_free += 1
        self.step(chip, job)

    def queue_eval(self, chip: Chip, priority: int, passed: bool,
                   then: Callable[[], None]) -> None:
        chip.outstanding_evals += 1
        heapq.heappush(chip.evals, (priority, next(self.sequence), self.eval_cost(passed), then))
        self.run_gpus(chip)

    def run_gpus(self, chip: Chip) -> None:
        while chip.free_gpus and chip.evals:
            _, _, cost, then = heapq.heappop(chip.evals)
            chip.free_gpus -= 1
            chip.busy_s += cost
            chip.evaluations += 1
            self.at(cost, lambda then=then: self.gpu_done(chip, then))

    def gpu_done(self, chip: Chip, then: Callable[[], None]) -> None:
        chip.free_gpus += 1
        chip.outstanding_evals -= 1
        then()
        self.run_gpus(chip)
        self.fill(chip)

    def final_done(self, chip: Chip) -> None:
        chip.waiting_finals -= 1

    def fill(self, chip: Chip) -> None:
        """Start jobs while threads are free and the backlog allows; next sweep when done."""
        while (chip.todo and chip.free_threads
               and chip.waiting_finals < 2 * chip.gpus + chip.concurrency):
            kind = chip.todo.popleft()
            chip.free_threads -= 1
            chip.running_jobs += 1
            self.step(chip, self.oneshot() if kind == "oneshot" else self.agent())
        if not chip.todo and not chip.running_jobs and not chip.outstanding_evals:
            if chip.sweeps:
                chip.todo = deque([chip.sweeps.popleft()] * self.a.ops)
                self.fill(chip)
            elif not chip.finished_at:
                chip.finished_at = self.now

    def run(self) -> dict[str, float]:
        for chip in self.chips:
            self.fill(chip)
        while self.events:
            self.now, _, action = heapq.heappop(self.events)
            action()
        wall = max(chip.finished_at for chip in self.chips)
        gpus = sum(chip.gpus for chip in self.chips)
        return {"wall_s": wall, "util": sum(c.busy_s for c in self.chips) / (gpus * wall),
                "evaluations": self.chips[0].evaluations, "llm_calls": self.chips[0].llm_calls,
                "gpu_bound_s": max(c.busy_s / c.gpus for c in self.chips),
                "endpoint_bound_s": self.model_s / self.a.endpoint_limit}


def critical_path_s(assume: Assumptions, costs: dict[str, float]) -> float:
    """The wall time with unlimited GPUs and endpoint: the sweeps one after another, each as
    long as one operator's chain of answers and evaluations (mean latencies)."""
    oneshot = assume.samples * assume.oneshot_latency_s + costs["timed_pass_s"]
    agent = assume.max_turns * (assume.turn_latency_s + costs["timed_pass_s"]) \
        + costs["timed_pass_s"]
    return assume.oneshot_methods * oneshot + assume.agent_methods * agent


def sequential_loop(assume: Assumptions, costs: dict[str, float], seed: int) -> dict[str, float]:
    """The loop before the queue, one chip, one GPU: each model answer, then its evaluation."""
    sim = Simulation(assume, costs, 1, 1, seed)
    wall = busy = 0.0
    evaluations = calls = 0
    for _ in range(assume.oneshot_methods):
        for _ in range(assume.ops):
            for _ in range(assume.samples):
                wall += sim.latency(assume.oneshot_latency_s)
                calls += 1
            for _ in range(assume.samples):
                cost = sim.eval_cost(sim.random.random() < assume.oneshot_pass)
                wall, busy, evaluations = wall + cost, busy + cost, evaluations + 1
    for _ in range(assume.agent_methods):
        for _ in range(assume.ops):
            best = False
            for _ in range(assume.max_turns):
                wall += sim.latency(assume.turn_latency_s)
                calls += 1
                passed = sim.random.random() < assume.turn_pass
                cost = sim.eval_cost(passed)
                wall, busy, evaluations = wall + cost, busy + cost, evaluations + 1
                best = best or passed
                if passed and assume.stop_at_pass:
                    break
            cost = sim.eval_cost(best)
            wall, busy, evaluations = wall + cost, busy + cost, evaluations + 1
    return {"wall_s": wall, "util": busy / wall, "evaluations": evaluations,
            "llm_calls": calls, "gpu_bound_s": busy, "endpoint_bound_s": sim.model_s}


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = Assumptions()
    for name, value in vars(defaults).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action="store_true", default=value)
        else:
            parser.add_argument(flag, type=type(value), default=value)
    parser.add_argument("--costs", choices=sorted(COSTS), default="h200")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 8, 64],
                        help="GPUs per chip's machine")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="operators in generation per chip (default: "
                             "concurrency-per-gpu x GPUs)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    assume = Assumptions(**{k: getattr(args, k) for k in vars(defaults)})
    costs = COSTS[args.costs]

    print(f"costs per candidate ({costs['source']}): timed pass "
          f"{costs['timed_pass_s']:.2f} s, failed {costs['failed_s']:.2f} s, fresh worker "
          f"{costs['fresh_worker_s']:.2f} s (measured)")
    print(f"assumed: {assume.ops} ops, {assume.oneshot_methods} one-shot methods x "
          f"{assume.samples} samples (answer {assume.oneshot_latency_s:g} s, pass "
          f"{assume.oneshot_pass:g}), {assume.agent_methods} agents x {assume.max_turns} turns "
          f"(turn {assume.turn_latency_s:g} s, pass {assume.turn_pass:g}"
          f"{', stop at first pass' if assume.stop_at_pass else ''}); of failures "
          f"{assume.retire_fraction:g} retire the worker, {assume.hang_fraction:g} hang "
          f"{assume.timeout_s:g} s; {assume.chips} chips share one endpoint of "
          f"{assume.endpoint_limit} requests at once")
    rows = []
    old = sequential_loop(assume, costs, args.seed)
    rows.append(["before the queue: sequential", 1, assume.chips, 1, _hours(old["wall_s"]),
                 f"{100 * old['util']:.0f}%", "-", "-", "-",
                 old["evaluations"], old["llm_calls"]])
    path = critical_path_s(assume, costs)
    for gpus in args.gpus:
        sim = Simulation(assume, costs, gpus, args.concurrency, args.seed)
        result = sim.run()
        rows.append(["queue", gpus, assume.chips * gpus, sim.chips[0].concurrency,
                     _hours(result["wall_s"]), f"{100 * result['util']:.0f}%",
                     _hours(result["gpu_bound_s"]), _hours(result["endpoint_bound_s"]),
                     _hours(path), result["evaluations"], result["llm_calls"]])
    from kgb_core.report import render_table

    print(render_table(["mode", "GPUs/chip", "GPUs", "concurrency/chip", "wall",
                        "GPU busy", "GPU-bound", "endpoint-bound", "path-bound",
                        "evals/chip", "model calls/chip"], rows))
    print("wall: the slowest chip; the chips run side by side, each on its own machine and "
          "store (kgb merge joins them). Bounds: GPU work / GPUs of a chip; all chips' model "
          "seconds / endpoint limit; one operator's chain per sweep, sweeps in a row.")


if __name__ == "__main__":
    main()
