#!/usr/bin/env bash
# Replays the plans of ge, per-operator, min-streams and auto on a CUDA GPU for a few corpus
# graphs and prints the table docs/replay.md keeps: measured against simulated makespan per
# policy, and measured auto against measured ge. A few minutes of device time at most (each
# replay is milliseconds; compiling `auto` takes the longest).
#
# Needs: a CUDA driver (libcuda.so.1, or SA_CUDA_LIB), the release binary (built here when
# cargo is present, else target/release/stream-alloc as carried), python3 for the table.
# Environment: GRAPHS (default "googlenet resnet50_train bert_base vit_b_16 densenet121
# squeezenet1_1"; the corpus has no inception_v3, googlenet is its Inception-v1 sibling), POLICIES, REPEAT (default 11),
# OUT (a directory for the JSON reports and traces; default a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."
graphs="${GRAPHS:-googlenet resnet50_train bert_base vit_b_16 densenet121 squeezenet1_1}"
policies="${POLICIES:-ge per-operator min-streams auto}"
repeat="${REPEAT:-11}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
bin=target/release/stream-alloc
if command -v cargo >/dev/null 2>&1; then
  cargo build --release --bin stream-alloc -q
fi
[ -x "$bin" ] || { echo "replay-gpu.sh: $bin is missing (build it, or carry it)" >&2; exit 1; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
status=0
for g in $graphs; do
  for p in $policies; do
    rc=0
    "$bin" replay "corpus/$g.json" --backend cuda --option "policy=$p" --repeat "$repeat" --json \
      --trace "$out/$g-$p.trace.json" > "$out/$g-$p.json" || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "replay-gpu.sh: $g $p exited $rc" >&2
      cat "$out/$g-$p.json" >&2 || true
      status=1
    fi
  done
done
python3 - "$out" "$graphs" "$policies" <<'PY'
import json, os, sys
out, graphs, policies = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
rows, device = [], None
print("| graph | policy | streams | events | measured us (median) | simulated us | measured / simulated | missing syncs |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
measured = {}
for g in graphs:
    for p in policies:
        path = os.path.join(out, f"{g}-{p}.json")
        try:
            r = json.load(open(path))
        except Exception as e:
            print(f"| {g} | {p} | - | - | failed: {e} | | | |")
            continue
        device = r["device"]
        measured[(g, p)] = r["measured_us"]
        print(f"| {g} | {p} | {r['streams']} | {r['events']} | {r['measured_us']:.1f} | {r['simulated_us']:.1f} | "
              f"{r['ratio']:.3f} | {len(r['violations'])} |")
print()
print("| graph | measured auto / measured ge | simulated auto / simulated ge |")
print("|---|---:|---:|")
for g in graphs:
    try:
        a = json.load(open(os.path.join(out, f"{g}-auto.json")))
        b = json.load(open(os.path.join(out, f"{g}-ge.json")))
        print(f"| {g} | {a['measured_us'] / b['measured_us']:.3f} | {a['simulated_us'] / b['simulated_us']:.3f} |")
    except Exception as e:
        print(f"| {g} | failed: {e} | |")
print()
print(f"Device: {device}; reports and traces in {out}")
PY
exit $status
