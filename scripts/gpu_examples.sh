#!/usr/bin/env bash
# Runs `kernelopt optimize` on each bundled example on a GPU machine and
# collects the reports. Usage: scripts/gpu_examples.sh OUT_DIR [BUDGET] [EXAMPLES...]
set -u
out=${1:?usage: scripts/gpu_examples.sh OUT_DIR [BUDGET] [EXAMPLES...]}
budget=${2:-48}
shift 2 2>/dev/null || shift $#
examples=${*:-softmax layernorm mlp_block}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KERNELOPT_BIN:-$root/build/tools/kernelopt/kernelopt}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
"$bin" doctor
for ex in $examples; do
  echo "=== $ex"
  start=$(date +%s)
  "$bin" optimize "$root/examples/$ex.py" --out "$out/runs/$ex" --workspace "$out/workspace" --budget "$budget"
  echo "rc=$? wall_s=$(( $(date +%s) - start ))"
done
