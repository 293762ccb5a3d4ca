"""Two surveys of bench/gpu/modes.py compared problem by problem: a mode's time in the first against the same
mode's in the second, for a setting that is a whole process's (e.g. `--cudnn-benchmark`: PyTorch keeps one
cuDNN plan per convolution per thread, found by its first call there; modes.py's `+cudnn_benchmark` extra
compares it within one process instead). CPU only (it reads numbers).

    python3 bench/modes_compare.py BEFORE/modes.json AFTER/modes.json [--mode default]

Prints, per problem both surveys timed, the mode's ms in each and before/after (above 1: the second is faster),
then the geomean over those problems and which problems only one survey has. Across processes, not
interleaved: clocks and placement differ between the two, so a few percent either way is noise.
"""
import argparse
import json
import math
import sys


def compare(before, after, mode="default"):
    """{"rows": [(problem, before_ms, after_ms, speedup)], "geomean", "only_before", "only_after"}."""
    def timed(record):
        return {name: row["modes"][mode]["ms"] for name, row in record["problems"].items()
                if "ms" in row.get("modes", {}).get(mode, {})}
    b, a = timed(before), timed(after)
    rows = [(name, b[name], a[name], b[name] / a[name]) for name in sorted(b) if name in a]
    geo = math.exp(sum(math.log(r[3]) for r in rows) / len(rows)) if rows else None
    return {"rows": rows, "geomean": geo, "only_before": sorted(set(b) - set(a)),
            "only_after": sorted(set(a) - set(b))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--mode", default="default")
    args = p.parse_args(argv)
    try:
        with open(args.before) as f:
            before = json.load(f)
        with open(args.after) as f:
            after = json.load(f)
    except (OSError, ValueError) as exc:
        print(f"modes_compare: {exc}", file=sys.stderr)
        return 1
    c = compare(before, after, args.mode)
    label = lambda r: "cudnn.benchmark" if r.get("cudnn_benchmark") else "plain"  # noqa: E731
    print(f"| problem | {args.mode} ms ({label(before)}) | {args.mode} ms ({label(after)}) | before/after |")
    print("|---|---:|---:|---:|")
    for name, b, a, x in c["rows"]:
        print(f"| {name} | {b:.3f} | {a:.3f} | {x:.3f}x |")
    if c["geomean"] is not None:
        print(f"geomean over {len(c['rows'])} problems: {c['geomean']:.3f}x")
    for key in ("only_before", "only_after"):
        if c[key]:
            print(f"{key.replace('_', ' ')}: {', '.join(c[key])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
