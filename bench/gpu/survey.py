"""Where torch.compile's Triton kernels stand at the suite's sizes: each problem captured and profiled the way
`kernelopt optimize` starts (the worker's capture and profile ops), no search. Run on the GPU machine:

    python3 bench/gpu/survey.py OUT PROBLEM_OR_DIR... [--deadline-s 400] [--shard i/n]

Writes OUT/survey.json (per problem: the compiled module's time per call; per Triton kernel: kind, ATen ops,
launches, bytes its launches touch, median ms, GB/s and the fraction of the measured copy bandwidth) and
OUT/code/<problem>/moduleN.py (Inductor's output modules: real fixtures for the rewrite families). Prints one
line per kernel that takes >= 10% of its problem's Triton time. Stops starting problems after --deadline-s,
so a call of the device tool ends in time; the problems left are listed.
"""
import argparse
import gc
import json
import os
import shutil
import statistics
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("paths", nargs="+")
    p.add_argument("--deadline-s", type=float, default=400)
    p.add_argument("--shard", default="1/1")
    a = p.parse_args()
    import torch
    from kernelopt.inputs.module.session import release_sessions
    i, n = (int(x) for x in a.shard.split("/"))
    files = problem_files(a.paths)[i - 1::n]
    os.makedirs(os.path.join(a.out, "code"), exist_ok=True)
    start, rows, left = time.time(), {}, []
    for path in files:
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))  # level1/x.py
        if time.time() - start > a.deadline_s:
            left.append(name)
            continue
        scratch = tempfile.mkdtemp()
        t0 = time.time()
        try:
            row = survey_one(path, scratch)
            dest = os.path.join(a.out, "code", name.replace(os.sep, "__").removesuffix(".py"))
            os.makedirs(dest, exist_ok=True)
            for m in row["modules"]:
                shutil.copyfile(m.pop("source"), os.path.join(dest, f"module{m['index']}.py"))
        except Exception as exc:
            row = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}
        row["wall_s"] = round(time.time() - t0, 1)
        rows[name] = row
        release_sessions()
        shutil.rmtree(scratch, ignore_errors=True)
        gc.collect()
        torch.cuda.empty_cache()
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
