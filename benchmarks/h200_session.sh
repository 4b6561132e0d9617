#!/usr/bin/env bash
# One device call on the H200: install kgb (no registry there), then run what is asked, each
# step's output into $OUT. Steps: probes (adversarial corpus + worker overhead), sweep (the
# reference method over the given sources, resumable across calls through .device/h200.db),
# report, doctor (kgb doctor and the backends table), and the harness's own performance (issue
# 9): calibrate (kgb calibrate into the store, so the report has roofline %), fidelity
# (timer_fidelity.py), overhead (worker_overhead.py with the overhead-vs-kernel table),
# throughput (sweep_throughput.py over every source, operators per minute), html (the full
# report as report.html + report.md), queue (queue_busy.py: GPU busy %, sequential vs queued). One call for all of issue 9 (at most 8 files come back
# from $OUT: these steps write 7 with environment.txt; the throughput sweep is cut at
# KGB_THROUGHPUT_TIMEOUT_S, default 540 s, so set KGB_THROUGHPUT_LIMIT to a number of operators
# when the whole call must fit one 10-minute run):
#   KGB_THROUGHPUT_LIMIT=120 bash benchmarks/h200_session.sh "calibrate fidelity overhead throughput html"
# Usage: bash benchmarks/h200_session.sh "probes sweep report" "--source aten ..."
# Several sweeps run one after the other when their argument sets are separated by ";"
# ("--source cublas; --source vllm"); they share the time limit KGB_SWEEP_LIMIT_S, each resuming
# its own run in the same store, so a later call picks up where this one stopped.
# Steps also include profile (sweep_throughput.py --profile under cProfile, KGB_PROFILE_ARGS) and warm (a correctness-only pass with KGB_WARM_WORKERS workers on the GPU,
# before sweep). Knobs: KGB_SWEEP_DEADLINE (epoch s: the sweeps stop then, whatever ran before them),
# KGB_STEP_TIMEOUT_S (fidelity, overhead, queue; default 420), KGB_FIDELITY_RUNS, KGB_FIDELITY_ARGS (e.g. --recorders),
# KGB_OVERHEAD_CANDIDATES, KGB_OVERHEAD_OPS (worker_overhead.py --timed-ops), KGB_PERF_DB=.device/h200.db (calibrate into the sweep's store),
# callcost (runner_call_cost.py and exchange_cost.py on the GPU), exchange (exchange_cost.py alone), owed (the checks this kgb
# still owes a GPU, one step), ops (chosen references, KGB_OPS_ARGS, KGB_OPS_REPEAT times), serve (serve_load.py, KGB_SERVE_ARGS),
# fullsweep (benchmarks/full_sweep.py: KGB_FULL_WORKERS, KGB_FULL_DEADLINE_S, KGB_FULL_AGAIN, KGB_FULL_ARGS, KGB_FULL_KEEP_BASELINES),
# passes (full_sweep.py passes in a row, KGB_PASSES: the one-worker comparison, the multi-sample run),
# compileahead (compile_ahead_probe.py: the GPU's compiles against a cache filled without it, KGB_COMPILE_AHEAD_ARGS),
# kernelbench (benchmarks/kernelbench_checks.py: issue 23's problems and cheats beside an in-process check),
# KGB_COMMIT (recorded in environment.txt), KGB_BASELINE_TREE (the cost step's older checkout), KGB_COST_ARGS (more worker_overhead.py arguments, e.g. --skip-fresh); startup (runner_startup.py and sandbox_probe.py); l2 (l2_persistence.py); corpus (anticheat_corpus.py alone, GPU cheats included). Carry .device to resume a sweep, and take the
# store that came back (h200.db) into .device before the next call. Carry .whl
# (scripts/device_wheels.sh) for the queue step, which needs the openai SDK.
set -uo pipefail
export PYTHONUNBUFFERED=1
steps=${1-"probes sweep report"}  # "" runs no step (install and environment only)
sweep_args=${2:-"--source aten"}
sweep_limit=${KGB_SWEEP_LIMIT_S:-480}
# Issue 9's store: calibration peaks and the throughput sweep, which the html step reports on.
# KGB_PERF_DB=.device/h200.db puts the calibration into the sweep's store, so one report has both.
perf_db=${KGB_PERF_DB:-.device/h200-perf.db}
mkdir -p .device "$OUT"
# Wheels carried in .whl (scripts/device_wheels.sh: the openai SDK for the queue step).
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} \
      || echo "installing .whl failed" >&2
fi
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 \
    || echo "pip install -e . failed; running from the tree" >&2
for project in plugins/*/pyproject.toml; do
    python3 -m pip install -q --no-deps --no-build-isolation --no-index -e "$(dirname "$project")" \
        >/dev/null 2>&1 || echo "pip install of $(dirname "$project") failed" >&2
done
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# The runners' sandbox: that machine has no registry, so bubblewrap travels as Debian packages
# (.dev/*.deb, fetched here with `apt-get download bubblewrap libcap2 libselinux1
# libpcre2-8-0`), unpacked under /tmp/bw, never over /; their libraries only where the
# machine lacks them.
if ! command -v bwrap >/dev/null 2>&1 && ls .dev/bubblewrap_*.deb >/dev/null 2>&1; then
  for deb in .dev/*.deb; do dpkg -x "$deb" /tmp/bw; done
  if ldd /tmp/bw/usr/bin/bwrap | grep -q "not found"; then
    printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/bw/lib/x86_64-linux-gnu:/tmp/bw/usr/lib/x86_64-linux-gnu exec /tmp/bw/usr/bin/bwrap "$@"\n' > /tmp/bw/bwrap
    chmod +x /tmp/bw/bwrap && export KGB_BWRAP=/tmp/bw/bwrap
  else
    export KGB_BWRAP=/tmp/bw/usr/bin/bwrap
  fi
fi
git_commit=${KGB_COMMIT:-unknown}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
  echo "kgb commit $git_commit"; date -u
  python3 -c "from kgb_core.evaluation.sandbox import find_sandbox as f; t = f(); print('runner sandbox:', t.name, '-', t.detail)"
} > "$OUT/environment.txt" 2>&1
# copy_store SRC DST: a store is in WAL mode, and a sweep cut by its deadline leaves its last
# rows in SRC-wal, which a plain cp leaves behind: SQLite's backup copies them too.
copy_store() {
  [ -f "$1" ] && python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))" "$1" "$2"
}
# run_sweeps NAME DEADLINE KGB-RUN-ARGS...: one resumable reference sweep per ";"-separated
# argument set of $sweep_args, until DEADLINE (epoch s), logged to $OUT/NAME.txt. The wall time
# per sweep, with the "N evaluated now" line above it, is the throughput of a real sweep
# (operators per minute) on this machine.
run_sweeps() {
  local name=$1 deadline=$2 args left started
  shift 2
  IFS=';' read -ra sweeps <<< "$sweep_args"
  for args in "${sweeps[@]}"; do
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -le 10 ]; then echo "no time left for: $args" >> "$OUT/$name.txt"; continue; fi
    echo "== $name $args (${left}s left)" >> "$OUT/$name.txt"
    started=$(date +%s)
    # shellcheck disable=SC2086
    timeout "$left" python3 -m kgb_core run $args --method reference --backend nvidia \
        --seed 0 --resume "$@" >> "$OUT/$name.txt" 2>&1
    echo "$name exit $? wall_s $(( $(date +%s) - started ))" >> "$OUT/$name.txt"
  done
}
for step in $steps; do
  case $step in
    probes)
      python3 benchmarks/anticheat_corpus.py --backend nvidia \
          --reference-ops aten.neg,aten.add,aten.softmax,aten.mm,aten.cumsum,aten.embedding \
          > "$OUT/anticheat.txt" 2>&1
      python3 benchmarks/worker_overhead.py --backend nvidia --op aten.neg \
          > "$OUT/overhead.txt" 2>&1 ;;
    warm)
      # A correctness-only pass with several workers on the GPU (kgb run --workers-per-device):
      # compiles and checks overlap on the host's cores, and Triton's on-disk cache is warm for
      # the timed sweep that follows. Its own store; KGB_WARM_LIMIT_S bounds it (default 240).
      run_sweeps warm "$(( $(date +%s) + ${KGB_WARM_LIMIT_S:-240} ))" \
          --no-timing --workers-per-device "${KGB_WARM_WORKERS:-6}" \
          --db .device/h200-correctness.db
      copy_store .device/h200-correctness.db "$OUT/h200-correctness.db" ;;
    sweep)
      # KGB_SWEEP_DEADLINE (epoch seconds) ends the sweeps at a time set for the whole call,
      # whatever the steps before them took.
      run_sweeps sweep "${KGB_SWEEP_DEADLINE:-$(( $(date +%s) + sweep_limit ))}" \
          --db .device/h200.db ;;
    doctor)
      { python3 -m kgb_core doctor --backend nvidia; echo "doctor exit $?"
        python3 -m kgb_core backends; python3 -m kgb_core plugins
        # The vendor plugins' own tests, on a machine that has none of their chips.
        python3 -m pytest -q -p no:cacheprovider plugins/ 2>&1 | tail -n 15
      } > "$OUT/doctor.txt" 2>&1 ;;
    profile)
      # Where a timed candidate's time goes on this machine: the worker's checker under
      # cProfile in-process (sweep_throughput.py --profile), KGB_PROFILE_ARGS picks the operators.
      # shellcheck disable=SC2086
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/sweep_throughput.py --backend nvidia \
          ${KGB_PROFILE_ARGS:---source vllm --profile 8} --top 40 > "$OUT/profile.txt" 2>&1
      echo "profile exit $?" >> "$OUT/profile.txt" ;;
    calibrate)
      python3 -m kgb_core calibrate --backend nvidia --db "$perf_db" \
          > "$OUT/calibrate.txt" 2>&1; echo "calibrate exit $?" >> "$OUT/calibrate.txt" ;;
    fidelity)
      # shellcheck disable=SC2086
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/timer_fidelity.py --backend nvidia --runs "${KGB_FIDELITY_RUNS:-5}" ${KGB_FIDELITY_ARGS:-} \
          > "$OUT/timer_fidelity.txt" 2>&1
      echo "fidelity exit $?" >> "$OUT/timer_fidelity.txt" ;;
    l2)
      # Whether L2 persistence beats the timer's flush (the runner's device-state watch).
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/l2_persistence.py \
          > "$OUT/l2_persistence.txt" 2>&1; echo "l2 exit $?" >> "$OUT/l2_persistence.txt" ;;
    corpus)
      # The adversarial corpus on the GPU, tests/adversarial/gpu/ and timed cheats included,
      # with reference kernels that must pass; KGB_CORPUS_ONLY (e.g. 'gpu/*') picks candidates.
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/anticheat_corpus.py --backend nvidia \
          ${KGB_CORPUS_ONLY:+--only "$KGB_CORPUS_ONLY"} >> "$OUT/anticheat.txt" 2>&1; echo "corpus exit $?" >> "$OUT/anticheat.txt" ;;
    ops)
      # Chosen operators' references, correctness only, KGB_OPS_REPEAT times (each run draws
      # its probes' cases afresh): KGB_OPS_ARGS="--op aten.zeros --op aten.t".
      for round in $(seq "${KGB_OPS_REPEAT:-1}"); do
        # shellcheck disable=SC2086
        timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 -m kgb_core run ${KGB_OPS_ARGS:---op aten.neg} \
            --method reference --backend nvidia --no-timing --seed 0 \
            --db "/tmp/ops-$round.db" >> "$OUT/ops.txt" 2>&1
        echo "ops round $round exit $?" >> "$OUT/ops.txt"
      done ;;
    fullsweep)
      # Issue 25: the whole timed reference sweep in one process (benchmarks/full_sweep.py),
      # KGB_FULL_WORKERS workers per device, stopped after KGB_FULL_DEADLINE_S (what finished
      # is reported), baselines stored in a fresh file; then the same operators (KGB_FULL_AGAIN
      # of them) with one worker, reusing the stored baselines, compared with the first.
      # KGB_FULL_KEEP_BASELINES=1 keeps a carried .device/baselines.sqlite (an earlier call's
      # $OUT/baselines.sqlite, same card and versions): the sweep of a machine that has
      # measured its baselines once.
      rm -f .device/full-*.db*
      [ "${KGB_FULL_KEEP_BASELINES:-0}" = 1 ] || rm -f .device/baselines.sqlite*
      grep -q "runner sandbox: none" "$OUT/environment.txt" \
          && echo "WARNING: the runners ran without a sandbox (bubblewrap not carried in .dev)" \
              >> "$OUT/full_sweep.txt"
      # Its timeout outlasts the deadline by KGB_FULL_DRAIN_S: the evaluations under way at the
      # deadline finish (20-40 s each on the H100 at 2cc6a60) before the summary line prints.
      timeout "$(( ${KGB_FULL_DEADLINE_S:-300} + ${KGB_FULL_DRAIN_S:-90} ))" \
          python3 benchmarks/full_sweep.py --backend nvidia \
          --workers-per-device "${KGB_FULL_WORKERS:-8}" --deadline-s "${KGB_FULL_DEADLINE_S:-300}" \
          --give-up-s "$(( ${KGB_FULL_DEADLINE_S:-300} + ${KGB_FULL_DRAIN_S:-90} - 10 ))" \
          --db .device/full-1.db --baselines .device/baselines.sqlite \
          --rows "$OUT/full_sweep_rows.txt" ${KGB_FULL_ARGS:-} \
          >> "$OUT/full_sweep.txt" 2>&1; echo "full sweep exit $?" >> "$OUT/full_sweep.txt"
      # The store, cut or not: each operator's duration and device wait are in its rows.
      copy_store .device/full-1.db "$OUT/full-1.db"
      copy_store .device/baselines.sqlite "$OUT/baselines.sqlite"
      if [ "${KGB_FULL_AGAIN:-0}" -gt 0 ]; then
        timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/full_sweep.py --backend nvidia \
            --workers-per-device "${KGB_FULL_AGAIN_WORKERS:-1}" --same-as .device/full-1.db \
            --limit "$KGB_FULL_AGAIN" --deadline-s "${KGB_FULL_AGAIN_DEADLINE_S:-120}" \
            --db .device/full-2.db --baselines .device/baselines.sqlite \
            --rows "$OUT/full_sweep_again_rows.txt" \
            --compare .device/full-1.db ${KGB_FULL_ARGS:-} > "$OUT/full_sweep_again.txt" 2>&1
        echo "again exit $?" >> "$OUT/full_sweep_again.txt"
      fi ;;
    compileahead)
      # Whether the runner's compiles on the GPU find the kernels compiled ahead without one
      # (benchmarks/compile_ahead_probe.py; KGB_COMPILE_AHEAD_ARGS: --op OP, repeatable).
      # shellcheck disable=SC2086
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/compile_ahead_probe.py \
          ${KGB_COMPILE_AHEAD_ARGS:---op aten.add --op aten.relu --op vllm.rms_norm --op vllm.cutlass_scaled_mm --op cublas.cublasStrmv_v2} \
          > "$OUT/compile_ahead.txt" 2>&1
      echo "compileahead exit $?" >> "$OUT/compile_ahead.txt" ;;
    passes)
      # Several full_sweep.py passes in a row, each against the carried baselines and peaks
      # (.device/baselines.sqlite): KGB_PASSES holds "NAME DEADLINE_S ARGS..." per pass,
      # passes separated by ";". A pass may name an earlier one's store as .device/NAME.db
      # (--same-as, --compare). Issue 25's one-worker comparison on 30 operators and its
      # multi-sample run (the pipeline against one worker) are such pairs:
      #   KGB_PASSES="eight 90 --limit 30 --workers-per-device 8; one 280 --same-as
      #   .device/eight.db --compare .device/eight.db"
      # Each pass's output, its rows after it, goes to $OUT/NAME.txt, its store to $OUT/NAME.db
      # (past 8 files they come back as one archive).
      IFS=';' read -ra passes <<< "${KGB_PASSES:?passes: set KGB_PASSES}"
      for pass in "${passes[@]}"; do
        read -r name deadline args <<< "$pass"
        rm -f ".device/$name.db"*
        # shellcheck disable=SC2086
        timeout "$(( deadline + ${KGB_FULL_DRAIN_S:-60} ))" python3 benchmarks/full_sweep.py \
            --backend nvidia --deadline-s "$deadline" \
            --give-up-s "$(( deadline + ${KGB_FULL_DRAIN_S:-60} - 10 ))" \
            --db ".device/$name.db" --baselines .device/baselines.sqlite \
            --rows "$OUT/${name}_rows" $args > "$OUT/$name.txt" 2>&1
        echo "$name exit $?" >> "$OUT/$name.txt"
        [ -f "$OUT/${name}_rows" ] && cat "$OUT/${name}_rows" >> "$OUT/$name.txt" \
            && rm "$OUT/${name}_rows"
        copy_store ".device/$name.db" "$OUT/$name.db"
      done
      copy_store .device/baselines.sqlite "$OUT/baselines.sqlite" ;;
    serve)
      # kgb serve under load on the GPU (benchmarks/serve_load.py; carry .whl for Starlette
      # and uvicorn): KGB_SERVE_ARGS, default timed requests from two clients; several
      # argument sets separated by ";" run one after the other into the same file.
      IFS=';' read -ra serve_runs <<< "${KGB_SERVE_ARGS:---timing --requests 12 --clients 2 --eval-runs 2}"
      for args in "${serve_runs[@]}"; do
        echo "== serve_load.py $args" >> "$OUT/serve_load.txt"
        # shellcheck disable=SC2086
        timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/serve_load.py --backend nvidia \
            $args >> "$OUT/serve_load.txt" 2>&1
        echo "serve exit $?" >> "$OUT/serve_load.txt"
      done ;;
    owed)
      # What this kgb still owes a GPU (RESULTS.md, fourth session of 2026-12-05): the three
      # references not yet seen passing there (`_to_copy`, and SDPA's fp16/bf16 bound), every
      # probe draw of aten.linear (its false ghost_replay_matched, fixed since), and the
      # exchange with reused host buffers against fresh memory.
      { timeout 150 python3 -m kgb_core run --op aten._to_copy \
            --op aten.scaled_dot_product_attention --op aten.log_softmax --op aten.addmv \
            --method reference --backend nvidia --no-timing --seed 0 --db /tmp/owed.db
        timeout 150 python3 benchmarks/probe_draw_audit.py --backend nvidia --op aten.linear \
            --op aten.addmm --workers 6
        timeout 60 python3 benchmarks/exchange_cost.py --device cuda --mb 4,64,512 --repeat 3
      } > "$OUT/owed.txt" 2>&1 ;;
    kernelbench)
      # Issue 23 on the GPU: the suite's KernelBench-format problems, answers timed by kgb, and
      # the kernelbench cheats, each beside a plain in-process check in KernelBench's style.
      # KGB_KERNELBENCH_ARGS: more arguments (--device-lead: timed with TimingSettings.device_lead).
      # shellcheck disable=SC2086
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/kernelbench_checks.py \
          --backend nvidia ${KGB_KERNELBENCH_ARGS:-} > "$OUT/kernelbench.txt" 2>&1
      echo "kernelbench exit $?" >> "$OUT/kernelbench.txt" ;;
    callcost)
      # Where a checked call's time goes inside a runner (runner_call_cost.py, in-process) and
      # what its tensors cost to cross the boundary by size (exchange_cost.py), on the device;
      # the file systems the exchange files land on first.
      { df -T /tmp /dev/shm
        for op in aten.neg aten.softmax; do
          timeout 100 python3 benchmarks/runner_call_cost.py --backend nvidia --op "$op" --calls 40
        done
        timeout 120 python3 benchmarks/exchange_cost.py --device cuda --mb 4,64,512
      } > "$OUT/callcost.txt" 2>&1 ;;
    exchange)
      # What a call's tensors cost to cross the boundary by size: files, arenas, pinned arenas.
      timeout 120 python3 benchmarks/exchange_cost.py --device cuda --mb 4,64,512 \
          > "$OUT/exchange.txt" 2>&1; echo "exchange exit $?" >> "$OUT/exchange.txt" ;;
    startup)
      # Where a fresh runner's first second goes (runner_startup.py, in and out of the
      # sandbox), then the sandbox probe (python and CUDA inside it, one evaluation).
      { timeout 120 python3 benchmarks/runner_startup.py --backend nvidia --runs 4
        timeout 120 python3 benchmarks/runner_startup.py --backend nvidia --runs 4 --no-sandbox
        timeout 150 python3 benchmarks/sandbox_probe.py --backend nvidia --timeout 45
      } > "$OUT/startup.txt" 2>&1 ;;
    cost)
      # Per-candidate cost of a fresh sandboxed runner against the worker of an older kgb
      # (.old: `git worktree add .old b11daf7`, carried), same candidate and distinct ones.
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/worker_overhead.py --backend nvidia \
          --op aten.neg --candidates "${KGB_OVERHEAD_CANDIDATES:-5}" --timed-ops "" \
          ${KGB_BASELINE_TREE:+--baseline-tree "$KGB_BASELINE_TREE"} ${KGB_COST_ARGS:-} \
          > "$OUT/cost.txt" 2>&1
      echo "cost exit $?" >> "$OUT/cost.txt" ;;
    overhead)
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/worker_overhead.py --backend nvidia --op aten.neg \
          --candidates "${KGB_OVERHEAD_CANDIDATES:-5}" \
          ${KGB_OVERHEAD_OPS:+--timed-ops "$KGB_OVERHEAD_OPS"} > "$OUT/overhead.txt" 2>&1; echo "overhead exit $?" >> "$OUT/overhead.txt" ;;
    throughput)
      # A new run in the perf store (only its rows are counted); KGB_THROUGHPUT_LIMIT
      # (operators, spread over the sources) keeps it inside one call's limit.
      timeout "${KGB_THROUGHPUT_TIMEOUT_S:-540}" python3 benchmarks/sweep_throughput.py \
          --backend nvidia --limit "${KGB_THROUGHPUT_LIMIT:-0}" --db "$perf_db" \
          > "$OUT/throughput.txt" 2>&1
      echo "throughput exit $?" >> "$OUT/throughput.txt" ;;
    queue)
      # Issue 10 on one GPU: device busy % and throughput, sequential vs the generation queue,
      # with a scripted slow loopback endpoint standing in for the model.
      timeout "${KGB_STEP_TIMEOUT_S:-420}" python3 benchmarks/queue_busy.py --backend nvidia --devices 0 \
          > "$OUT/queue_busy.txt" 2>&1; echo "queue exit $?" >> "$OUT/queue_busy.txt" ;;
    html)
      # No registry there: plots only if matplotlib travels as wheels (.whl, see the device
      # README); without it the HTML has every table and says so.
      python3 -m kgb_core report --db "$perf_db" --html "$OUT/report.html" \
          --md "$OUT/report.md" > /dev/null 2>> "$OUT/calibrate.txt"
      copy_store "$perf_db" "$OUT/h200-perf.db" ;;
    report)
      python3 -m kgb_core report --db .device/h200.db --per-op > "$OUT/report.txt" 2>&1
      python3 -m kgb_core report --db .device/h200.db --json > "$OUT/report.json" 2>&1
      copy_store .device/h200.db "$OUT/h200.db" ;;
  esac
done
tail -n 5 "$OUT"/*.txt
# At most 8 files come back from $OUT: past that, everything travels as one archive.
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
  (cd "$OUT" && tar czf ../kgb-session.tgz . && find . -maxdepth 1 -type f -delete \
     && mv ../kgb-session.tgz .)
fi
