#!/usr/bin/env bash
# One shard of a level of the suite, on the GPU machine: `kernelopt bench bench/problems --level L --shard i/n`,
# so that calls of under 10 minutes each cover a level; merge with `kernelopt bench-merge`. Writes under OUT:
# gpu.txt, LEVEL-i.log, LEVEL-i.json / .md (the bench), LEVEL-i-reports.tgz (each problem's report.json/.md);
# with the three Nsight files, the 8 files the device tool brings back: a caller writes nothing else to OUT.
# usage: bench/gpu/shard.sh OUT LEVEL i/n   (BUDGET, default 4; SEARCH_SECONDS, each problem's kernel-search allowance,
# default 60; BENCH_TIMEOUT seconds, default 420; NSIGHT=N
# adds Nsight Compute figures for the N kernels that lose the most time: LEVEL-i-nsight.md, LEVEL-i-nsight.tgz,
# within NSIGHT_TIMEOUT (200 s): then give BENCH_TIMEOUT 330 or less, so that the call stays under 10 minutes;
# RESUME=DIR, a shard's directory of an earlier call cut short (its runs/*/*/report.json, as recorded under
# bench/results): its finished problems are read back, not run again; say so where the results are recorded)
set -uo pipefail
out=${1:?OUT directory}; level=${2:?level}; shard=${3:?i/n}
root=$(cd "$(dirname "$0")/../.." && pwd)
tag="level$level-${shard%%/*}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" | tee -a "$out/gpu.txt"
if [ -n "${RESUME:-}" ]; then  # the bench reads a problem whose report.json is in its --out back (resumable)
  mkdir -p "/tmp/$tag" && cp -r "$RESUME/runs" "/tmp/$tag/" && echo "resuming: $(ls "$RESUME"/runs/*/*/report.json | wc -l) finished problem(s) from $RESUME"
fi
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-420}" "$root/build-gpu/kernelopt" bench "$root/bench/problems" --level "$level" --shard "$shard" \
  --out "/tmp/$tag" --workspace "/tmp/$tag-ws" --budget "${BUDGET:-4}" --trials 30 --search-seconds "${SEARCH_SECONDS:-60}" > "$out/$tag.log" 2>&1
echo "bench rc $? in $(( $(date +%s) - start )) s"
tail -3 "$out/$tag.log"
cp "/tmp/$tag/bench.json" "$out/$tag.json"; cp "/tmp/$tag/bench.md" "$out/$tag.md"
(cd "/tmp/$tag" && tar czf "$out/$tag-reports.tgz" runs/*/*/report.json runs/*/*/report.md)
cut -c1-160 "$out/$tag.md" | sed -n '/^| problem/,$p'
if [ "${NSIGHT:-0}" -gt 0 ]; then  # Nsight Compute figures for the NSIGHT kernels that lose the most time
  timeout "${NSIGHT_TIMEOUT:-200}" python3 "$root/bench/gpu/nsight.py" "/tmp/$tag-nsight" "/tmp/$tag" \
    "$root/bench/problems" --top "$NSIGHT" --deadline-s $(( ${NSIGHT_TIMEOUT:-200} - 80 )) --timeout-s 75 \
    > "$out/$tag-nsight.log" 2>&1
  echo "nsight rc $?"
  cp "/tmp/$tag-nsight/nsight.md" "$out/$tag-nsight.md" 2>/dev/null
  tar czf "$out/$tag-nsight.tgz" -C "/tmp/$tag-nsight" . 2>/dev/null
fi
