"""Where torch.compile's Triton kernels stand at the suite's sizes: each problem captured and profiled the way
`kernelopt optimize` starts (the worker's capture and profile ops), no search. Run on the GPU machine:

    python3 bench/gpu/survey.py OUT PROBLEM_OR_DIR... [--deadline-s 400] [--shard i/n]

Writes OUT/survey.json (per problem: the compiled module's time per call; per Triton kernel: kind, ATen ops,
launches, bytes its launches touch, median ms, GB/s and the fraction of the measured copy bandwidth) and
OUT/code/<problem>/moduleN.py (Inductor's output modules: real fixtures for the rewrite families). Prints one
line per kernel that takes >= 10% of its problem's Triton time. Stops starting problems after --deadline-s,
so a call of the device tool ends in time; the problems left are listed. Each problem runs in a process of its
own (one process for all leaked device memory from problem to problem: 29 of 56 level-1 problems ran out of it).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def problem_files(paths):
    out = []
    for given in paths:
        if os.path.isdir(given):
            for dirpath, dirnames, names in os.walk(given):
                dirnames.sort()
                out += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".py") and not n.startswith("_")]
        else:
            out.append(given)
    return out


def survey_one(path, scratch):
    from kernelopt.worker import ops
    args = {"problem": path, "device": "cuda", "seeds": [0], "out_dir": scratch}
    cap = ops.op_capture(args)
    row = {"modules": [], "work": cap["work"]}
    for m in cap["modules"]:
        prof = ops.op_profile(dict(args, module=m["index"], reps=5))
        bw = prof["bandwidth_gbps"]
        by_name = {k["name"]: k for k in m["artifact"]["kernels"]}
        kernels = []
        for k in prof["kernels"]:
            ms = statistics.median(k["samples_ms"]) if k["samples_ms"] else None
            gbps = k["bytes"] / ms / 1e6 if ms else None
            kernels.append({"name": k["name"], "kind": k["kind"], "launches": k["launches"], "bytes": k["bytes"],
                            "ms": ms, "gbps": gbps, "fraction": gbps / bw if gbps and bw else None,
                            "aten": by_name.get(k["name"], {}).get("aten_ops"), "config": k["config"]})
        row["modules"].append({"index": m["index"], "module_ms": statistics.median(prof["module_samples_ms"]),
                               "bandwidth_gbps": bw, "kernels": kernels, "source": m["path"]})
    return row


def run_one(path, dest):
    """One problem, in this process: its row as one JSON line on stdout, its modules copied into dest."""
    scratch = tempfile.mkdtemp()
    try:
        row = survey_one(path, scratch)
        os.makedirs(dest, exist_ok=True)
        for m in row["modules"]:
            shutil.copyfile(m.pop("source"), os.path.join(dest, f"module{m['index']}.py"))
    except Exception as exc:
        row = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(row))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("paths", nargs="+")
    p.add_argument("--deadline-s", type=float, default=400)
    p.add_argument("--shard", default="1/1")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one problem, row as JSON on stdout
    a = p.parse_args()
    if a.one:
        return run_one(a.paths[0], a.out)
    import torch
    i, n = (int(x) for x in a.shard.split("/"))
    files = problem_files(a.paths)[i - 1::n]
    os.makedirs(os.path.join(a.out, "code"), exist_ok=True)
    start, rows, left = time.time(), {}, []
    for path in files:
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))  # level1/x.py
        if time.time() - start > a.deadline_s:
            left.append(name)
            continue
        t0 = time.time()
        dest = os.path.join(a.out, "code", name.replace(os.sep, "__").removesuffix(".py"))
        proc = subprocess.run([sys.executable, __file__, dest, path, "--one"], capture_output=True, text=True)
        try:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            row = {"error": f"exit {proc.returncode}: " + (proc.stderr.strip().splitlines() or [""])[-1][:300]}
        row["wall_s"] = round(time.time() - t0, 1)
        rows[name] = row
        if "error" in row:
            print(f"{name}: FAILED {row['error']}", flush=True)
            continue
        total = sum(k["ms"] or 0 for m in row["modules"] for k in m["kernels"])
        call = sum(m["module_ms"] for m in row["modules"])
        print(f"{name}: call {call:.3f} ms, Triton {total:.3f} ms, {row['wall_s']} s", flush=True)
        for m in row["modules"]:
            for k in m["kernels"]:
                if k["ms"] and total and k["ms"] >= 0.1 * total:
                    frac = f"{100 * k['fraction']:.0f}%" if k["fraction"] else "-"
                    print(f"    {k['name'][:48]:48s} {k['kind'][:22]:22s} {k['ms']:8.3f} ms {frac:>5s} "
                          f"{','.join(k['aten'] or [])[:60]}", flush=True)
    record = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
              "shard": a.shard, "problems": rows, "not_reached": left}
    import triton
    record["triton"] = triton.__version__
    with open(os.path.join(a.out, f"survey-{i}of{n}.json"), "w") as f:
        json.dump(record, f, indent=1)
    print(f"{len(rows)} problems surveyed, {len(left)} not reached in {time.time() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
