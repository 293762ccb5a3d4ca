#!/usr/bin/env bash
# The thinnest real path on the GPU machine, before anything is measured there: the GPU tests
# (tests/gpu) and the README's first command on the bundled softmax example. Writes under OUT:
#   gpu.txt (device and versions), gputests.log, softmax.log, softmax/ (the run directory's reports)
# usage: bench/gpu/smoke.sh OUT    (exit 1 when a GPU test or the example failed)
# The engine binary is build-gpu/kernelopt (stripped, built on the CPU machine, carried).
set -uo pipefail
out=${1:?OUT directory}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" | tee -a "$out/gpu.txt"
rc=0
start=$(date +%s)
timeout "${GPUTESTS_TIMEOUT:-200}" python3 -m pytest -q -s -rs "$root/tests/gpu" > "$out/gputests.log" 2>&1 || rc=1
echo "gpu tests rc $rc in $(( $(date +%s) - start )) s"; tail -15 "$out/gputests.log"
start=$(date +%s)
timeout "${EXAMPLE_TIMEOUT:-120}" "$root/build-gpu/kernelopt" optimize "$root/examples/softmax.py" --out /tmp/smoke/softmax \
  --workspace /tmp/smoke/ws --budget 8 > "$out/softmax.log" 2>&1
erc=$?
echo "example rc $erc in $(( $(date +%s) - start )) s"; tail -6 "$out/softmax.log"
mkdir -p "$out/softmax"; cp /tmp/smoke/softmax/report.* "$out/softmax/" 2>/dev/null
[ $erc -eq 0 ] || rc=1
exit $rc
