"""Nsight Compute figures for the kernels that lose the most time to the roofline, before and after (issue 18).

Run on the GPU machine after a `kernelopt bench` whose run directories are still there:

    python3 bench/gpu/nsight.py OUT BENCH_DIR PROBLEMS_DIR [--top 5] [--timeout-s 150]

BENCH_DIR is the bench's --out (bench.json, runs/); no ncu run starts after --deadline-s (200 s), each is cut at
--timeout-s (150 s) with the program it profiles, and the results are written after each problem. PROBLEMS_DIR the directory the bench was given (a problem's
file is PROBLEMS_DIR/<its row's "problem">). The kernels picked are the bench's memory-bound Triton kernels
with the most milliseconds above their bytes at the measured bandwidth (before_ms - bytes / bandwidth), at most
--top of them. For each problem holding one, `ncu` profiles one model call of torch.compile (before) and one of
`kernelopt.load(run)` (after), after three warm-up calls, through cudaProfilerStart/Stop, so compilation and
autotuning launches are never profiled; ncu flushes the caches before each kernel (its default), as the bench
flushes L2. Figures per kernel, summed over its launches in the call: duration, DRAM bytes read and written,
DRAM throughput (% of peak), achieved and theoretical occupancy, registers a thread, L2 hit rate.
Writes OUT/nsight.json and OUT/nsight.md (next to the bench's own timings of the same kernels) and ncu's own
output per run under OUT/raw/.
"""
import argparse
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

METRICS = {
    "gpu__time_duration.sum": "ns",
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy_pct",
    "launch__registers_per_thread": "registers",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
}


def lost_ms(kernel, bandwidth_gbps):
    """Milliseconds a kernel spends above its bytes at the measured bandwidth (before any rewrite)."""
    if not kernel.get("bytes") or not kernel.get("before_ms") or not bandwidth_gbps:
        return 0.0
    return kernel["before_ms"] - kernel["bytes"] / bandwidth_gbps / 1e6


def pick_kernels(bench, top):
    """The `top` memory-bound kernels of bench.json's problems with the most ms lost to the roofline:
    [(problem, run-relative module index, kernel row, lost ms)], most lost first."""
    picked = []
    for row in bench.get("problems", []):
        bandwidth = (row.get("roofline") or {}).get("bandwidth_gbps")
        for k in row.get("kernels") or []:
            if k.get("bound") == "memory":
                lost = lost_ms(k, bandwidth)
                if lost > 0:
                    picked.append((row["problem"], k.get("module"), k, lost))
    picked.sort(key=lambda p: -p[3])
    return picked[:top]


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_ncu_csv(text):
    """ncu --csv --page raw --print-units base: one dict a launch, {"name": kernel name, metric: value}.
    Lines that are not the CSV (ncu's ==PROF== notes, the program's own output) are skipped; the row
    after the header gives the units."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    at = next((i for i, row in enumerate(rows) if "Kernel Name" in row), None)  # the program may print CSV too
    if at is None:
        raise ValueError("no 'Kernel Name' column in ncu's CSV")
    header = rows[at]
    name_at = header.index("Kernel Name")
    launches = []
    for row in rows[at + 1:]:
        if len(row) != len(header) or not row[name_at]:
            continue
        if all(_number(row[i]) is None for i, h in enumerate(header) if h in METRICS):
            continue  # the units row
        launch = {"name": row[name_at]}
        for i, h in enumerate(header):
            if h in METRICS:
                launch[METRICS[h]] = _number(row[i])
        launches.append(launch)
    return launches


def summarize(launches, name):
    """One kernel's figures over its launches in the profiled call: durations and bytes summed, percentages
    weighted by duration, registers the largest."""
    mine = [l for l in launches if l["name"] == name]
    if not mine:
        return None
    ns = sum(l.get("ns") or 0 for l in mine)
    out = {"launches": len(mine), "ms": ns / 1e6}
    for key in ("dram_read_bytes", "dram_write_bytes"):
        out[key] = sum(l.get(key) or 0 for l in mine)
    for key in ("dram_pct", "achieved_occupancy_pct", "theoretical_occupancy_pct", "l2_hit_pct"):
        weighted = [(l.get(key), l.get("ns") or 0) for l in mine if l.get(key) is not None]
        total = sum(w for _, w in weighted)
        out[key] = sum(v * w for v, w in weighted) / total if total else None
    out["registers"] = max((l.get("registers") or 0 for l in mine), default=None)
    out["dram_gbps"] = (out["dram_read_bytes"] + out["dram_write_bytes"]) / ns if ns else None
    return out


def profile_call(variant, problem_path, run_dir):
    """In the process ncu starts (PYTHONPATH holds python/): one model call between cudaProfilerStart and Stop,
    after three warm-ups."""
    import torch
    from kernelopt.problem import build_model, load_problem, make_inputs
    problem = load_problem(problem_path)
    model = build_model(problem, problem_path, "cuda")
    inputs = make_inputs(problem, problem_path, 0, "cuda")
    if variant == "before":
        fn = torch.compile(model)
    else:
        import kernelopt
        fn = kernelopt.load(run_dir)
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def run_ncu(variant, problem_path, run_dir, names, timeout_s, raw_path):
    """ncu over one call of the problem's model: (launches, error or None). ncu's output is kept at raw_path."""
    regex = "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"
    # --clock-control none: the clocks as the bench's timings ran them (the device notes' advice)
    cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page", "raw", "--print-units", "base",
           "--metrics", ",".join(METRICS), "--kernel-name", regex,
           sys.executable, os.path.abspath(__file__), "--profile-call", variant, problem_path, run_dir]
    # a session of its own: on the timeout, ncu and the program it profiles are killed together (the GPU freed)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return [], f"ncu ran past {timeout_s:.0f} s"
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    with open(raw_path, "w") as f:
        f.write(proc.stdout + "\n# stderr\n" + proc.stderr)
    try:
        launches = parse_ncu_csv(proc.stdout)
    except ValueError as exc:
        launches, proc.returncode = [], proc.returncode or 1
        proc.stderr += str(exc)
    if proc.returncode != 0 or not launches:
        tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [""])[-1]
        return launches, f"ncu exit {proc.returncode}: {tail[:300]}"
    return launches, None


def markdown(rows):
    out = ["| problem | kernel | bench before → after ms | ncu before → after ms | DRAM % of peak | DRAM GB/s | "
           "achieved occupancy % | theoretical % | registers | L2 hit % |",
           "|---|---|---|---|---|---|---|---|---|---|"]

    def pair(r, key, fmt):
        vals = [(r.get(v) or {}).get(key) for v in ("before", "after")]
        return " → ".join("-" if v is None else fmt.format(v) for v in vals)

    for r in rows:
        k = r["bench"]
        out.append(f"| {r['problem']} | {r['kernel']} | {k['before_ms']:.3f} → {k['after_ms']:.3f} | "
                   f"{pair(r, 'ms', '{:.3f}')} | {pair(r, 'dram_pct', '{:.0f}')} | {pair(r, 'dram_gbps', '{:.0f}')} | "
                   f"{pair(r, 'achieved_occupancy_pct', '{:.0f}')} | {pair(r, 'theoretical_occupancy_pct', '{:.0f}')} | "
                   f"{pair(r, 'registers', '{:.0f}')} | {pair(r, 'l2_hit_pct', '{:.0f}')} |")
    errors = [f"- {r['problem']} {v}: {r[v + '_error']}" for r in rows for v in ("before", "after")
              if r.get(v + "_error")]
    return "\n".join(out + ([""] + errors if errors else [])) + "\n"


def write(out, rows):
    with open(os.path.join(out, "nsight.json"), "w") as f:
        json.dump({"metrics": list(METRICS), "kernels": rows,
                   "note": "ncu matches kernels by name: same-named kernels of two graphs of one problem are summed"},
                  f, indent=1)
    with open(os.path.join(out, "nsight.md"), "w") as f:
        f.write(markdown(rows))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--profile-call", nargs=3, metavar=("VARIANT", "PROBLEM", "RUN_DIR"), help=argparse.SUPPRESS)
    p.add_argument("out", nargs="?")
    p.add_argument("bench_dir", nargs="?")
    p.add_argument("problems_dir", nargs="?")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--timeout-s", type=float, default=150, help="one ncu run's limit")
    p.add_argument("--deadline-s", type=float, default=200,
                   help="no ncu run starts after this; what was profiled is written as it comes")
    a = p.parse_args()
    if a.profile_call:
        return profile_call(*a.profile_call)
    if not (a.out and a.bench_dir and a.problems_dir):
        p.error("OUT, BENCH_DIR and PROBLEMS_DIR are required")
    with open(os.path.join(a.bench_dir, "bench.json")) as f:
        bench = json.load(f)
    picked = pick_kernels(bench, a.top)
    by_problem = {}
    for problem, module, k, lost in picked:
        by_problem.setdefault(problem, []).append((k, lost))
    rows = []
    os.makedirs(os.path.join(a.out, "raw"), exist_ok=True)
    start = time.time()
    for n, (problem, kernels) in enumerate(by_problem.items()):
        path = os.path.join(a.problems_dir, problem)
        run_dir = os.path.join(a.bench_dir, "runs", os.path.splitext(problem)[0])
        names = sorted({k["name"] for k, _ in kernels})
        results = {}
        for variant in ("before", "after"):
            t0 = time.time()
            if t0 - start > a.deadline_s:
                results[variant] = ([], f"not run: past the {a.deadline_s:.0f} s deadline")
                continue
            raw = os.path.join(a.out, "raw", f"{n}-{os.path.basename(problem)[:-3]}-{variant}.csv")
            results[variant] = run_ncu(variant, path, run_dir, names, a.timeout_s, raw)
            print(f"{problem} {variant}: {len(results[variant][0])} launches, {time.time() - t0:.0f} s"
                  + (f", {results[variant][1]}" if results[variant][1] else ""), flush=True)
        for k, lost in kernels:
            row = {"problem": problem, "kernel": k["name"], "module": k.get("module"), "lost_ms": lost,
                   "bench": {key: k.get(key) for key in ("before_ms", "after_ms", "bytes", "roofline_before",
                                                          "roofline_after", "status")}}
            for variant, (launches, error) in results.items():
                row[variant] = summarize(launches, k["name"])
                if error:
                    row[variant + "_error"] = error
            rows.append(row)
        write(a.out, rows)  # after each problem: a call cut short keeps what was profiled
    write(a.out, rows)
    print(markdown(rows))
    return 0 if all(r.get("before") and r.get("after") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main() or 0)
