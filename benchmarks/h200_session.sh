#!/usr/bin/env bash
# One device call on the H200: install kgb (no registry there), then run what is asked, each
# step's output into $OUT. Steps: probes (adversarial corpus + worker overhead), sweep (the
# reference method over the given sources, resumable across calls through .device/h200.db),
# report, doctor (kgb doctor and the backends table). Usage: bash benchmarks/h200_session.sh "probes sweep report" "--source aten ..."
# Several sweeps run one after the other when their argument sets are separated by ";"
# ("--source cublas; --source vllm"); they share the time limit KGB_SWEEP_LIMIT_S, each resuming
# its own run in the same store, so a later call picks up where this one stopped.
set -uo pipefail
export PYTHONUNBUFFERED=1
steps=${1:-"probes sweep report"}
sweep_args=${2:-"--source aten"}
sweep_limit=${KGB_SWEEP_LIMIT_S:-480}
mkdir -p .device "$OUT"
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 \
    || echo "pip install -e . failed; running from the tree" >&2
for project in plugins/*/pyproject.toml; do
    python3 -m pip install -q --no-deps --no-build-isolation --no-index -e "$(dirname "$project")" \
        >/dev/null 2>&1 || echo "pip install of $(dirname "$project") failed" >&2
done
export PYTHONPATH=$PWD
git_commit=${KGB_COMMIT:-unknown}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
  echo "kgb commit $git_commit"; date -u; } > "$OUT/environment.txt" 2>&1
for step in $steps; do
  case $step in
    probes)
      python3 benchmarks/anticheat_corpus.py --backend nvidia \
          --reference-ops aten.neg,aten.add,aten.softmax,aten.mm,aten.cumsum,aten.embedding \
          > "$OUT/anticheat.txt" 2>&1
      python3 benchmarks/worker_overhead.py --backend nvidia --op aten.neg \
          > "$OUT/overhead.txt" 2>&1 ;;
    sweep)
      deadline=$(( $(date +%s) + sweep_limit ))
      IFS=';' read -ra sweeps <<< "$sweep_args"
      for args in "${sweeps[@]}"; do
        left=$(( deadline - $(date +%s) ))
        if [ "$left" -le 10 ]; then echo "no time left for: $args" >> "$OUT/sweep.txt"; continue; fi
        echo "== sweep $args (${left}s left)" >> "$OUT/sweep.txt"
        # shellcheck disable=SC2086
        timeout "$left" python3 -m kgb_core run $args --method reference \
            --backend nvidia --seed 0 --db .device/h200.db --resume >> "$OUT/sweep.txt" 2>&1
        echo "sweep exit $?" >> "$OUT/sweep.txt"
      done ;;
    doctor)
      { python3 -m kgb_core doctor --backend nvidia; echo "doctor exit $?"
        python3 -m kgb_core backends; python3 -m kgb_core plugins
        # The vendor plugins' own tests, on a machine that has none of their chips.
        python3 -m pytest -q -p no:cacheprovider plugins/ 2>&1 | tail -n 15
      } > "$OUT/doctor.txt" 2>&1 ;;
    report)
      python3 -m kgb_core report --db .device/h200.db --per-op > "$OUT/report.txt" 2>&1
      python3 -m kgb_core report --db .device/h200.db --json > "$OUT/report.json" 2>&1
      cp .device/h200.db "$OUT/h200.db" 2>/dev/null ;;
  esac
done
tail -n 5 "$OUT"/*.txt
