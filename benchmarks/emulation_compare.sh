#!/usr/bin/env bash
# Does --emulate give the same results at two commits? For each vendor backend, one reference
# run on the CPU interpreter with that vendor's quirks, in an older checkout and in this one,
# then the verdicts, case counts and skipped cases compared per operator (issue 24's must-show:
# "kgb run --backend cpu --emulate <vendor> gives the same results as before").
#   git worktree add /tmp/old <commit>
#   bash benchmarks/emulation_compare.sh /tmp/old
# The older checkout's core and plugins are put first on PYTHONPATH (python -P: the current
# folder is not), so its harness, judge and runners all run its own code.
set -uo pipefail
old=$1
here=$(cd "$(dirname "$0")/.." && pwd)
python=${KGB_PYTHON:-$here/.venv/bin/python}
out=$(mktemp -d)
vendors="amd ascend cambricon hygon iluvatar kunlunxin metax mthreads"
ops="--op aten.neg --op aten.sort --op aten.mm --op aten.cumsum --op aten.exp --op vllm.rms_norm
     --op cublas.cublasDaxpy_v2 --op cublas.cublasSgemm_v2"
for tree in "$old" "$here"; do
  name=$([ "$tree" = "$here" ] && echo new || echo old)
  path=$tree; for d in "$tree"/plugins/*/; do path="$path:$d"; done
  for v in $vendors; do
    # shellcheck disable=SC2086
    (cd "$out" && PYTHONPATH="$path" "$python" -P -c "from kgb_core.cli import main; main()" \
        run --backend cpu --emulate "$v" $ops --method reference --no-timing --seed 0 \
        --db "$out/$name-$v.db" > "$out/$name-$v.log" 2>&1) || echo "$name $v: kgb run failed"
  done
done
"$python" - "$out" $vendors <<'PY'
import json, sqlite3, sys
out, vendors = sys.argv[1], sys.argv[2:]
differing = 0
for vendor in vendors:
    rows = {}
    for tree in ("old", "new"):
        conn = sqlite3.connect(f"{out}/{tree}-{vendor}.db")
        rows[tree] = {op: (verdict, len(json.loads(d).get("cases", [])),
                           sum(c.get("status") == "skipped" for c in json.loads(d).get("cases", [])))
                      for op, verdict, d in conn.execute("SELECT op, verdict, detail FROM results")}
    same = rows["old"] == rows["new"]
    differing += not same
    print(f"{vendor:10s} {'same' if same else 'DIFFERENT'}  " + "  ".join(
        f"{op}={v} ({n} cases, {s} skipped)" for op, (v, n, s) in sorted(rows["new"].items())))
    for op in sorted(set(rows["old"]) | set(rows["new"])):
        if rows["old"].get(op) != rows["new"].get(op):
            print(f"    {op}: before {rows['old'].get(op)}, now {rows['new'].get(op)}")
print(f"vendors differing: {differing} of {len(vendors)}")
PY
