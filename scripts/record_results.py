"""Turn finished runs into a bench/results record: one table row per run, with versions and the command.

    python3 scripts/record_results.py RESULT.md "COMMAND" RUN_DIR [RUN_DIR ...]
"""
import json
import os
import subprocess
import sys
import time


def main():
    out, command, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows, versions = [], {}
    for run in runs:
        with open(os.path.join(run, "report.json")) as f:
            r = json.load(f)
        versions = r["versions"] or versions
        e = r["end_to_end"]
        s = e["speedup_vs_compile"]
        rows.append(f"| {os.path.basename(run.rstrip('/'))} | {e['eager_ms']['median']:.4f} | {e['baseline_ms']['median']:.4f} "
                    f"| {e['optimized_ms']['median']:.4f} | {e['baseline_ms']['mean']:.4f} | {e['optimized_ms']['mean']:.4f} "
                    f"| {s['speedup']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}] | {'pass' if e['passed'] else 'FAIL'} "
                    f"| {r['summary']['kernels_improved']}/{r['summary']['kernels']} |")
        for m in r["modules"]:
            for k in m["kernels"]:
                o = k["outcome"]
                after = f"{o['after_ms']:.4f}" if o["status"] == "improved" else "-"
                rows.append(f"|   `{k['name']}` | | {k['profile']['time_ms']:.4f} | {after} | | | "
                            f"{o['status']}: {o['why']} | | |")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = [f"# {os.path.splitext(os.path.basename(out))[0]}", "",
            f"- date: {time.strftime('%Y-%m-%d')}", f"- GPU: {versions.get('gpu')}",
            f"- torch {versions.get('torch')}, triton {versions.get('triton')}, CUDA {versions.get('cuda')}",
            f"- kernelopt commit: {commit}", f"- command: `{command}`",
            "- method: CUDA events, 3 warm-up calls, L2 flushed (256 MB write) before each trial, eager / torch.compile /"
            " optimized interleaved; correctness vs float64 eager on fresh seeds 1000-1002", "",
            "| run / kernel | eager ms | torch.compile ms | optimized ms | compile mean | optimized mean "
            "| speedup vs compile [95% CI] / kernel verdict | correct | kernels improved |",
            "|---|---:|---:|---:|---:|---:|---|---|---|"] + rows
    with open(out, "w") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
