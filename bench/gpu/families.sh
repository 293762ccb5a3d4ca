#!/usr/bin/env bash
# The rewrite families on the GPU: the pooling rewrite's kernels against Inductor's (bench/gpu/pool_kernels.py,
# bit for bit, timed), then `kernelopt bench` over the level-1 problems each family targets, in the order given.
# Writes under OUT at most 8 files, all that the device tool brings back (a caller adds none of its own): gpu.txt,
# pool.tgz (pool.log, pool_gpu.json), bench.log, bench.json, bench.md, reports.tgz (each problem's
# report.json/report.md: every kernel's bandwidth before and after), nsight.md, nsight.tgz.
# usage: bench/gpu/families.sh OUT PROBLEM...   (problem files; POOL=0 leaves the pooling kernels out; NSIGHT=N
# adds Nsight Compute figures, before and after, for the N kernels that lose the most time: nsight.md, and
# nsight.json, nsight.log and ncu's raw output in nsight.tgz, within
# NSIGHT_TIMEOUT (200 s): then give BENCH_TIMEOUT 330 or less, so that the call stays under 10 minutes)
# The engine binary is build-gpu/kernelopt (stripped, built on the CPU machine, carried).
set -uo pipefail
out=${1:?OUT directory}; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" | tee -a "$out/gpu.txt"
rm -rf /tmp/families-pool /tmp/families-nsight /tmp/families-nsight.log
if [ "${POOL:-1}" = 1 ]; then
  start=$(date +%s)
  mkdir -p /tmp/families-pool
  OUT=/tmp/families-pool timeout "${POOL_TIMEOUT:-120}" python3 "$root/bench/gpu/pool_kernels.py" \
    > /tmp/families-pool/pool.log 2>&1
  echo "pool kernels rc $? in $(( $(date +%s) - start )) s"
  tar czf "$out/pool.tgz" -C /tmp/families-pool pool.log pool_gpu.json 2>/dev/null
  python3 - /tmp/families-pool/pool.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        best = max(r["configs"].items(), key=lambda kv: kv[1].get("gbps", 0))
        print(r["fixture"], "inductor", r.get("inductor"), "best", best[0], best[1])
PY
fi
rm -rf /tmp/families /tmp/families-bench
for p in "$@"; do  # each problem under its own level's folder, so bench.json counts it in that level
  dir=/tmp/families/$(basename "$(dirname "$p")"); mkdir -p "$dir"; cp "$p" "$dir/"
done
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-420}" "$root/build-gpu/kernelopt" bench /tmp/families --out /tmp/families-bench \
  --workspace /tmp/families-ws --budget "${BUDGET:-4}" --trials 30 --search-seconds "${SEARCH_SECONDS:-60}" > "$out/bench.log" 2>&1
echo "bench rc $? in $(( $(date +%s) - start )) s"
tail -4 "$out/bench.log"
cp /tmp/families-bench/bench.json /tmp/families-bench/bench.md "$out/" 2>/dev/null
(cd /tmp/families-bench && tar czf "$out/reports.tgz" runs/*/*/report.json runs/*/*/report.md)
cut -c1-200 "$out/bench.md" 2>/dev/null | head -30
if [ "${NSIGHT:-0}" -gt 0 ]; then  # Nsight Compute figures for the NSIGHT kernels that lose the most time
  start=$(date +%s)
  timeout "${NSIGHT_TIMEOUT:-200}" python3 "$root/bench/gpu/nsight.py" /tmp/families-nsight /tmp/families-bench \
    /tmp/families --top "$NSIGHT" --deadline-s $(( ${NSIGHT_TIMEOUT:-200} - 80 )) --timeout-s 75 \
    > /tmp/families-nsight.log 2>&1
  echo "nsight rc $? in $(( $(date +%s) - start )) s"
  cp /tmp/families-nsight.log /tmp/families-nsight/nsight.log 2>/dev/null
  cp /tmp/families-nsight/nsight.md "$out/" 2>/dev/null
  tar czf "$out/nsight.tgz" -C /tmp/families-nsight nsight.json nsight.log raw 2>/dev/null
  cut -c1-250 /tmp/families-nsight.log | tail -12
fi
