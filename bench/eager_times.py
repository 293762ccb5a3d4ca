"""Eager forward time of each benchmark problem on the GPU: the check that the suite's sizes are the sizes users run.

Run from the repository root on a GPU machine:
    python3 bench/eager_times.py                          # every problem under bench/problems
    python3 bench/eager_times.py bench/problems/level1 bench/problems/level3/02_transformer_block_sdpa.py
For each problem: the model and its inputs built on the GPU (as the worker builds them: weights from the
problem's seed, inputs drawn under torch.device("cuda")), 3 warm-up forwards without grad, then 10 timed ones
(CUDA events around one forward, L2 flushed before each, as the bench times), median. Prints one line per
problem, `problem  eager_ms  input_GB  peak_GB` (peak = the most device memory allocated at once: weights,
inputs and one forward's intermediates), and writes every figure to --json. A problem that fails or runs out
of memory is reported as such and the run goes on. Nothing is compiled; the suite takes a minute or two.
The suite's target (bench/problems/README.md): 1-15 ms per eager forward on the H200.
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "problems")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402

from kernelopt.device import timing  # noqa: E402
from kernelopt.problem import build_model, describe, load_problem, make_inputs, storage_bytes  # noqa: E402

TARGET_MS = (1.0, 15.0)


def problem_files(paths):
    """(path, name) for each problem file given or under each directory given, in order; name is the path
    under bench/problems when the file lies there (the bench's name for it), else under the directory given."""
    found = []
    for given in paths:
        if os.path.isdir(given):
            for dirpath, dirnames, names in os.walk(given):
                dirnames.sort()
                found += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".py") and not n.startswith("_")]
        else:
            found.append(given)
    out = []
    for path in found:
        real = os.path.realpath(path)
        base = PROBLEMS if real.startswith(os.path.realpath(PROBLEMS) + os.sep) else os.path.dirname(real)
        out.append((path, os.path.relpath(real, base)))
    return out


def level_of(name):
    """The bench's level of a problem name: its first path part that is a level or `small`."""
    for part in name.split(os.sep):
        if part.startswith("level") or part == "small":
            return part
    return "other"


def measure(path, warmup, trials):
    """The figures of one problem; raises whatever building or running it raises."""
    problem = load_problem(path)
    torch.cuda.reset_peak_memory_stats()
    model = build_model(problem, path, "cuda")
    inputs = make_inputs(problem, path, 0, "cuda")
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    weights = list(model.parameters()) + list(model.buffers())
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        torch.cuda.synchronize()
        samples = [timing.time_once(lambda: model(*inputs)) for _ in range(trials)]
    return {
        "eager_ms": statistics.median(samples),
        "samples_ms": [round(s, 4) for s in samples],
        "input_gb": storage_bytes(tensors) / 1e9,
        "weights_gb": storage_bytes(weights) / 1e9,
        "peak_gb": torch.cuda.max_memory_allocated() / 1e9,
        "input_dtypes": sorted({str(x.dtype).replace("torch.", "") for x in tensors}),
    }


def release():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=[PROBLEMS], help="problem files or directories (default: bench/problems)")
    parser.add_argument("--json", default="eager_times.json", help="where to write the figures (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("eager_times: no CUDA device (this script times problems on the GPU)")
    files = problem_files(args.paths)
    if not files:
        sys.exit(f"eager_times: no problem files in {' '.join(args.paths)}")
    props = torch.cuda.get_device_properties(0)
    rows, started = [], time.perf_counter()
    print(f"{'problem':64s} {'eager_ms':>9s} {'input_GB':>9s} {'peak_GB':>8s}", flush=True)
    for path, name in files:
        row = {"problem": name, "level": level_of(name)}
        try:
            row.update(measure(path, args.warmup, args.trials))
        except Exception as exc:  # out of memory, a broken problem: report it and go on
            row["error"] = ("out of memory: " if isinstance(exc, torch.cuda.OutOfMemoryError) else "") + describe(exc)
        release()
        rows.append(row)
        if "error" in row:
            print(f"{name:64s} FAILED {row['error']}", flush=True)
        else:
            flag = "" if TARGET_MS[0] <= row["eager_ms"] <= TARGET_MS[1] else "  (outside 1-15 ms)"
            print(f"{name:64s} {row['eager_ms']:9.3f} {row['input_gb']:9.3f} {row['peak_gb']:8.2f}{flag}", flush=True)
    timed = [r for r in rows if "error" not in r]
    inside = sum(TARGET_MS[0] <= r["eager_ms"] <= TARGET_MS[1] for r in timed)
    print(f"{len(rows)} problems: {inside} within {TARGET_MS[0]:g}-{TARGET_MS[1]:g} ms, {len(timed) - inside} outside, "
          f"{len(rows) - len(timed)} failed; {time.perf_counter() - started:.0f} s", flush=True)
    record = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda,
              "warmup": args.warmup, "trials": args.trials, "method": "median of CUDA-event times of one eager forward "
              "(no grad, L2 flushed before each, kernelopt.device.timing.time_once)", "problems": rows}
    with open(args.json, "w") as f:
        json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
