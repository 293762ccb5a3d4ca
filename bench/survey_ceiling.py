"""The ceiling of kernel rewrites on a surveyed suite: what each problem's call would take with every Triton
kernel at its limit (its bytes at the measured copy bandwidth) and everything else (vendor calls, host time) as
torch.compile has it, the same definition as the bench's `ceiling` (src/report/report.cpp, ceiling_saving_ms):

    ceiling = call_ms / (call_ms - sum over kernels of max(0, kernel_ms - kernel_bytes / bandwidth))

Reads the JSON records of bench/gpu/survey.py (one or more; a later record's problem replaces an earlier one's)
and prints each problem's ceiling and, per level, the geomean over the problems with a Triton kernel; a problem
without one counts 1.0 in `geomean_all`, as the bench counts a kept baseline. CPU only (it reads numbers).

    python3 bench/survey_ceiling.py SURVEY.json... [--json OUT.json]
"""
import argparse
import json
import math
import sys


def problem_ceiling(row):
    """(ceiling, call_ms, triton_ms) of one surveyed problem; ceiling None without a Triton kernel."""
    call = sum(m["module_ms"] for m in row["modules"])
    saving = triton = 0.0
    for m in row["modules"]:
        bytes_per_ms = m["bandwidth_gbps"] * 1e6
        for k in m["kernels"]:
            if k.get("ms") is None:
                continue
            triton += k["ms"]
            saving += max(0.0, k["ms"] - k["bytes"] / bytes_per_ms)
    if triton == 0 or call <= 0:
        return None, call, triton
    return call / max(call - saving, 1e-9), call, triton


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(records):
    problems = {}
    for rec in records:
        problems.update(rec["problems"])
    rows, failed = {}, []
    for name, row in sorted(problems.items()):
        if "modules" not in row:
            failed.append(name)
            continue
        c, call, triton = problem_ceiling(row)
        rows[name] = {"ceiling": c, "call_ms": call, "triton_ms": triton}
    levels = {}
    for name, r in rows.items():
        levels.setdefault(name.split("/")[0], []).append(r["ceiling"])
    summary = {lvl: {"problems": len(cs), "with_triton": sum(c is not None for c in cs),
                     "geomean_with_triton": geomean([c for c in cs if c is not None]),
                     "geomean_all": geomean([c if c is not None else 1.0 for c in cs])}
               for lvl, cs in sorted(levels.items())}
    return {"rows": rows, "levels": summary, "not_surveyed": failed,
            "method": "every Triton kernel at its bytes over the measured copy bandwidth, the rest of the call "
                      "as torch.compile has it (bench/survey_ceiling.py)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("surveys", nargs="+")
    p.add_argument("--json")
    a = p.parse_args()
    records = []
    for path in a.surveys:
        try:
            with open(path) as f:
                records.append(json.load(f))
        except (OSError, ValueError) as exc:
            print(f"survey_ceiling: cannot read {path}: {exc}", file=sys.stderr)
            return 2
    s = summarize(records)
    for name, r in s["rows"].items():
        c = f"{r['ceiling']:.3f}" if r["ceiling"] else "  -  "
        print(f"{name:52s} call {r['call_ms']:7.3f} ms  Triton {r['triton_ms']:7.3f} ms  ceiling {c}")
    for lvl, v in s["levels"].items():
        g1 = f"{v['geomean_with_triton']:.3f}" if v["geomean_with_triton"] else "-"
        g2 = f"{v['geomean_all']:.3f}" if v["geomean_all"] else "-"
        print(f"{lvl}: {v['problems']} problems, {v['with_triton']} with Triton kernels: ceiling geomean {g1} "
              f"(with Triton), {g2} (all, none = 1.0)")
    if s["not_surveyed"]:
        print(f"not surveyed (failed): {' '.join(s['not_surveyed'])}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(s, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
