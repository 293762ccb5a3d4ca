"""The per-family before/after bandwidth table of a bench (issue 18): which rewrite family each improved Triton
kernel came from, and the kernels' share of the measured copy bandwidth before and after.

    python3 bench/family_table.py BENCH_JSON [BENCH_JSON ...]   (one bench.json per shard, or a merged one)

Per family (a kernel improved otherwise is counted under its origin: "tuner" for a launch config alone, "library",
"coder"; a kernel whose baseline was kept under "baseline kept"): kernels, problems, the share of the bandwidth
they reach before and after (their limits, bytes at their problem's measured bandwidth, over their times, summed
over the family's kernels, so a long kernel weighs more), and the median kernel speedup. Prints a
Markdown table; `--json` prints the numbers instead. Reads the rows' `kernels` (bench.json from the commit that
added `family` and `origin` to them on; older records count every improved kernel under "unknown").
"""
import argparse
import json
import statistics
import sys


def family_of(kernel):
    """The rewrite family of an improved kernel; else how it was improved (tuner: a launch config alone,
    library, coder, ...)."""
    if kernel.get("status") != "improved":
        return "baseline kept"
    return kernel.get("family") or kernel.get("origin") or "unknown"


def table(benches):
    """{family: {"kernels", "problems", "limit_ms", "before_ms", "after_ms", "fraction_before", "fraction_after",
    "median_kernel_speedup"}} over the memory-bound kernels with bytes and times. A kernel's limit is its bytes at
    its own problem's measured bandwidth (merged shards may come from other GPUs); a family's fraction is the sum
    of its kernels' limits over the sum of their times."""
    out = {}
    for bench in benches:
        for row in bench.get("problems", []):
            bandwidth = (row.get("roofline") or {}).get("bandwidth_gbps")
            for k in row.get("kernels") or []:
                if (k.get("bound") != "memory" or not k.get("bytes") or not k.get("before_ms") or not k.get("after_ms")
                        or not bandwidth):
                    continue
                f = out.setdefault(family_of(k), {"kernels": 0, "problems": set(), "limit_ms": 0.0, "before_ms": 0.0,
                                                  "after_ms": 0.0, "speedups": []})
                f["kernels"] += 1
                f["problems"].add(row["problem"])
                f["limit_ms"] += k["bytes"] / bandwidth / 1e6  # GB/s * 1e6 = bytes per ms
                f["before_ms"] += k["before_ms"]
                f["after_ms"] += k["after_ms"]
                f["speedups"].append(k["before_ms"] / k["after_ms"])
    for f in out.values():
        f["problems"] = sorted(f["problems"])
        f["fraction_before"] = f["limit_ms"] / f["before_ms"]
        f["fraction_after"] = f["limit_ms"] / f["after_ms"]
        f["median_kernel_speedup"] = statistics.median(f["speedups"])
    return out


def markdown(rows):
    lines = ["| family | kernels | problems | share of bandwidth before → after | median kernel speedup |",
             "|---|---:|---:|---|---:|"]
    order = sorted(rows, key=lambda name: (name == "baseline kept", -rows[name]["kernels"], name))
    for name in order:
        f = rows[name]
        lines.append(f"| {name} | {f['kernels']} | {len(f['problems'])} | {100 * f['fraction_before']:.0f}% → "
                     f"{100 * f['fraction_after']:.0f}% | {f['median_kernel_speedup']:.3f}x |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("bench_json", nargs="+")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    benches = []
    for path in a.bench_json:
        try:
            with open(path) as f:
                benches.append(json.load(f))
        except (OSError, ValueError) as exc:
            print(f"family_table: {path}: {exc}", file=sys.stderr)
            return 2
    rows = table(benches)
    if a.json:
        json.dump({k: {key: v for key, v in f.items() if key != "speedups"} for k, f in rows.items()}, sys.stdout,
                  indent=1)
        print()
    else:
        sys.stdout.write(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
