#!/usr/bin/env bash
# Regenerates src/replay/kernels/replay.ptx, the device code `replay --backend cuda` embeds, from
# its LLVM IR with LLVM's NVPTX back end (llc; no CUDA toolkit). PTX for sm_70 JIT-compiles on
# every later GPU. `--check` fails when the checked-in PTX differs from a fresh build.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/src/replay/kernels"
llc="${LLC:-llc}"
command -v "$llc" >/dev/null || { echo "replay-ptx.sh: llc (LLVM with the NVPTX target) is needed" >&2; exit 1; }
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$llc" -march=nvptx64 -mcpu=sm_70 -O2 "$dir/replay.ll" -o "$out"
if [ "${1:-}" = "--check" ]; then
  diff -u "$dir/replay.ptx" "$out"
else
  cp "$out" "$dir/replay.ptx"
fi
