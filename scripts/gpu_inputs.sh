#!/usr/bin/env bash
# GPU machine: the three kinds of input end to end, for bench/results records.
#   - optimize-kernel on each standalone Triton example (examples/triton/*.py);
#   - optimize-helion on each Helion example (examples/helion/*.py; needs helion importable);
#   - optimize examples/softmax.py with the Coder answered by scripted relay answers
#     (tests/fixtures/relay/softmax/answers: correct, wrong, slow and fast-but-wrong kernels).
# Usage: scripts/gpu_inputs.sh OUT_DIR [BUDGET]. Writes OUT_DIR/<run>/ and OUT_DIR/<run>.log.
set -u
out=${1:?usage: scripts/gpu_inputs.sh OUT_DIR [BUDGET]}
budget=${2:-16}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KERNELOPT_BIN:-$root/build/tools/kernelopt/kernelopt}
export KERNELOPT_ROOT=$root PYTHONUNBUFFERED=1
mkdir -p "$out"
run() {  # NAME ARGS...: one run, its log and wall time
  local name=$1; shift
  local start=$(date +%s)
  "$bin" "$@" --out "$out/$name" --workspace "$out/workspace" --budget "$budget" > "$out/$name.log" 2>&1
  echo "$name: rc=$? wall_s=$(( $(date +%s) - start )): $(tail -1 "$out/$name.log")"
}
for f in "$root"/examples/triton/*.py; do run "triton_$(basename "$f" .py)" optimize-kernel "$f"; done
if python3 -c "import helion" 2>/dev/null; then
  for f in "$root"/examples/helion/*.py; do run "helion_$(basename "$f" .py)" optimize-helion "$f"; done
else
  echo "helion: not importable here; Helion examples skipped"
fi
relay=$out/relay_softmax
rm -rf "$relay" && mkdir -p "$relay" && cp -r "$root/tests/fixtures/relay/softmax/answers" "$relay/"
run llm_relay_softmax optimize "$root/examples/softmax.py" --llm-agent "coder=relay:$relay" --coder-candidates 4 \
  --repair-rounds 0
