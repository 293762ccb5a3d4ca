#!/usr/bin/env bash
# Issue 17's record, on the GPU machine: the memory budget's GPU test (each op's peak over the working
# set, printed), then the six 6-16 GB problems of bench/results/2026-12-04-memory-h200 (the "before")
# in the shard given, so that two calls of under 10 minutes each cover them. Writes under OUT:
#   gputests.log, bN/ (bench directory: bench.json, bench.md, runs/), bN.log
# usage: bench/gpu/memory_budget.sh OUT SHARD   (SHARD 1/2 or 2/2, merged with `kernelopt bench-merge`, or all)
# PROBLEMS_DIR another problem directory (default: the six of the "before" record).
# SKIP_GPU_TEST=1 leaves the GPU test out (smoke.sh ran it); BENCH_TIMEOUT caps the bench (seconds).
# The engine binary is build-gpu/kernelopt (stripped, built on the CPU machine, carried).
set -uo pipefail
out=${1:?OUT directory}
shard=${2:-1/2}
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${shard%%/*}
shard_args=(--shard "$shard")
[ "$shard" = all ] && { n=all; shard_args=(); }
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" | tee -a "$out/gpu.txt"
if [ "$n" = 1 ] && [ -z "${SKIP_GPU_TEST:-}" ]; then
  timeout 200 python3 -m pytest -q -s -rs "$root/tests/gpu/test_memory_budget_gpu.py" > "$out/gputests.log" 2>&1
  echo "gpu test rc $?"; tail -12 "$out/gputests.log"
fi
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-380}" "$root/build-gpu/kernelopt" bench "${PROBLEMS_DIR:-$root/bench/results/2026-12-04-memory-h200/problems}" \
  "${shard_args[@]}" --out "$out/b$n" --workspace "/tmp/ws$n" --budget 4 --trials 30 > "$out/b$n.log" 2>&1
echo "bench rc $? in $(( $(date +%s) - start )) s"
tail -5 "$out/b$n.log"
cut -c1-300 "$out/b$n/bench.md" 2>/dev/null | tail -4
