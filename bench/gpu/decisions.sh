#!/usr/bin/env bash
# Whole-model decisions on the GPU machine: the GPU tests of CUDA graphs' aliasing
# (tests/gpu/test_decisions_gpu.py), then `kernelopt bench --decisions` over the problem files given.
# Writes under OUT: gpu.txt (device and versions), gputests.log, bench.log, bench/ (bench.json, bench.md,
# bench.html and each problem's run directory).
# usage: bench/gpu/decisions.sh OUT [PROBLEMS...]   (exit 1 when a GPU test or the bench failed)
# PROBLEMS: KernelBench-format files (the lead picks level-3 networks; each is run twice, without and with
# decisions, so pick few); they are linked into one
# directory for the bench. The engine binary is build-gpu/kernelopt (stripped, built on the CPU machine,
# carried). The whole script keeps under 9 minutes: GPUTESTS_TIMEOUT (120 s) + BENCH_TIMEOUT (400 s).
# GPUTESTS=0 skips the GPU tests; BUDGET, TRIALS, SEARCH_SECONDS (0 = none) and DECISIONS_SECONDS (60) go to the
# bench as --budget, --trials, --search-seconds, --decisions-seconds.
set -uo pipefail
out=${1:?OUT directory}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" | tee -a "$out/gpu.txt"
rc=0
start=$(date +%s)
if [ "${GPUTESTS:-1}" != 0 ]; then
  timeout "${GPUTESTS_TIMEOUT:-120}" python3 -m pytest -q -s -rs "$root/tests/gpu/test_decisions_gpu.py" \
    > "$out/gputests.log" 2>&1 || rc=1
  echo "gpu tests rc $rc in $(( $(date +%s) - start )) s"; tail -10 "$out/gputests.log"
fi
if [ $# -eq 0 ]; then
  echo "no problem files given: the bench is not run"
  exit $rc
fi
problems=$(mktemp -d /tmp/decisions_problems.XXXX)
for p in "$@"; do ln -s "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")" "$problems/$(basename "$p")"; done
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-400}" "$root/build-gpu/kernelopt" bench "$problems" --decisions --out "$out/bench" \
  --workspace /tmp/decisions_ws --budget "${BUDGET:-8}" --trials "${TRIALS:-30}" \
  --search-seconds "${SEARCH_SECONDS:-0}" --decisions-seconds "${DECISIONS_SECONDS:-60}" > "$out/bench.log" 2>&1
brc=$?
echo "bench rc $brc in $(( $(date +%s) - start )) s"; tail -15 "$out/bench.log"
grep -h "decision" "$out/bench.log" | tail -40
[ $brc -eq 0 ] || rc=1
exit $rc
