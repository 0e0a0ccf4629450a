#!/usr/bin/env bash
# Byte-identity harness for refactors: runs the release binary over every corpus graph under
# several option sets and commands, writing each output (and exit code) to OUT_DIR, so two runs
# can be compared with `diff -r`. Usage: scripts/identical.sh OUT_DIR [BIN]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:?usage: scripts/identical.sh OUT_DIR [BIN]}"
BIN="${2:-target/release/stream-alloc}"
CORPUS="${CORPUS:-corpus}"
mkdir -p "$OUT"
SETS=(
  "default|"
  "ge|--option compat=ge"
  "per-operator|--option policy=per-operator"
  "min-streams|--option policy=min-streams"
  "list|--option policy=list"
  "budget8|--option policy=budget:8"
  "auto|--option policy=auto"
  "notify|--option event=notify"
  "tasks64|--option max_task_count=64"
  "ge-notify|--option compat=ge --option event=notify"
  "ge-tasks64|--option compat=ge --option max_task_count=64"
  "verify|--option verify=true"
  "streams4|--option policy=per-operator --option max_streams=4"
  "events24|--option policy=list --option max_events=24"
  "budget4-events|--option policy=budget:4 --option max_events=16"
  "auto-bounded|--option policy=auto --option max_streams=6 --option max_events=32"
  "ge-auto|--option compat=ge --option policy=auto"
  "auto-verify|--option policy=auto --option verify=true"
  "auto-memory|--option policy=auto --option max_memory=64M"
)
# Timing lines are the only outputs that may differ between two runs of the same binary.
strip_time() { sed -E -e 's/"(time_ms|elapsed_ms|time_us)": *[0-9.e+-]+/"\1":T/g' -e 's/^  time: .*$/  time: T/'; }
for g in "$CORPUS"/*.json; do
  name=$(basename "$g" .json)
  for s in "${SETS[@]}"; do
    tag=${s%%|*}
    read -r -a opts <<<"${s#*|}"
    base="$OUT/$name.$tag"
    "$BIN" allocate "$g" --format json "${opts[@]}" 2>"$base.allocate.err" | strip_time >"$base.allocate.json"
    echo "rc=${PIPESTATUS[0]}" >>"$base.allocate.err"
    "$BIN" summary "$g" --format json "${opts[@]}" 2>"$base.summary.err" | strip_time >"$base.summary.json"
    echo "rc=${PIPESTATUS[0]}" >>"$base.summary.err"
    "$BIN" simulate "$g" "${opts[@]}" 2>"$base.simulate.err" | strip_time >"$base.simulate.txt"
    echo "rc=${PIPESTATUS[0]}" >>"$base.simulate.err"
    for stage in logical sync; do
      "$BIN" allocate "$g" --stage "$stage" --format json "${opts[@]}" 2>"$base.$stage.err" | strip_time >"$base.$stage.json"
      echo "rc=${PIPESTATUS[0]}" >>"$base.$stage.err"
    done
  done
done
sed -i -E 's/^  time: .*$/  time: T/' "$OUT"/*.err
echo "wrote $(ls "$OUT" | wc -l) files to $OUT"
