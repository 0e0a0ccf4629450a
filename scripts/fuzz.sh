#!/usr/bin/env bash
# Runs the four fuzz targets (fuzz/fuzz_targets) concurrently at low priority for SECS seconds
# each (default 900). With cargo-fuzz and a nightly toolchain (FUZZ_ENGINE=libfuzzer) they run
# coverage-guided under libFuzzer; otherwise (the default) the plain driver of fuzz/src/driver.rs
# runs seeded random and mutated inputs on the stable toolchain. Logs go to fuzz/logs/; a failing
# input is saved under fuzz/artifacts/<target>/ — copy it to fuzz/regressions/<target>/ (a graph document
# the pipeline rejects goes in json_loader/) so
# `cargo test --test it fuzz_props` replays it forever.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${SECS:-900}"
engine="${FUZZ_ENGINE:-driver}"
mkdir -p logs corpus/json_loader corpus/onnx_import
# Seeds for the loader: the bad-input fixtures and the example graphs; for the importer, the
# ONNX test models.
cp -n ../tests/fixtures/bad_input/*.json ../corpus/*.json corpus/json_loader/ 2>/dev/null || true
cp -n ../tests/fixtures/onnx/*.onnx corpus/onnx_import/ 2>/dev/null || true
targets=(json_loader pipeline onnx_import runtime_pool)
if [ "$engine" = libfuzzer ]; then
  # cargo-fuzz needs nightly's -Z flags; with only the stable toolchain, RUSTC_BOOTSTRAP=1 allows them.
  tc=+nightly
  if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    tc=
    export RUSTC_BOOTSTRAP=1
  fi
  cargo $tc fuzz build --features libfuzzer -s none
  for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    nice -n 19 cargo $tc fuzz run --features libfuzzer -s none "$t" "corpus/$t" -- -max_total_time="$secs" \
      > "logs/$t.log" 2>&1 &
  done
else
  cargo build --release --bins
  for t in "${targets[@]}"; do
    seeds=corpus/json_loader
    [ "$t" = onnx_import ] && seeds=corpus/onnx_import
    nice -n 19 "target/release/$t" --secs "$secs" --seed "${SEED:-1}" --seeds "$seeds" \
      > "logs/$t.log" 2>&1 &
  done
fi
status=0
for job in $(jobs -p); do wait "$job" || status=1; done
tail -n 2 logs/*.log
exit "$status"
