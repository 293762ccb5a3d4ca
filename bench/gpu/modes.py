"""What torch.compile's own modes give each problem at the suite's sizes, against the default mode: the ceiling
of the whole-model decisions (`--decisions`) before any search. Run on the GPU machine:

    python3 bench/gpu/modes.py OUT PROBLEM_OR_DIR... [--deadline-s 400] [--modes default,reduce-overhead,...]
                               [--trials 20] [--problem-timeout 150] [--cudnn-benchmark]

A mode may add "+channels_last" (e.g. default+channels_last, or channels_last alone: default's) and
"+cudnn_benchmark": cuDNN's autotuning for that mode's convolutions, in the same process and interleaved with the
others: as the decision runs it, on the process's autotuning thread with the flag on (PyTorch keeps its cuDNN
plans per thread, found by a convolution's first call), the other modes on this thread as a user runs them.
--cudnn-benchmark instead makes the whole survey one with the flag on in every process (bench/modes_compare.py
compares two such surveys).

Per problem (each in a process of its own, under --problem-timeout): eager and every mode compiled
(kernelopt.runtime.decision.compile_model, as the `decide` op compiles) and called as the loader calls it
(call_as_loaded: channels_last converts the inputs in each call, CUDA graphs' outputs are cloned; before
2026-12-08 channels_last's conversion was left out of its time), each mode's first call timed as its compile,
then all of them timed interleaved on seed 0's inputs (device/timing.interleaved: CUDA events, L2 flushed). Writes OUT/modes.json (per problem: ms per mode, compile seconds, speedup over default) and prints
one line per problem. Stops starting problems after --deadline-s; the problems left are listed. Not a gate:
no output is checked (the `decide` op does that); a mode that raised is recorded with its error.
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))

from survey import problem_files  # noqa: E402

DEFAULT_MODES = "default,reduce-overhead,max-autotune-no-cudagraphs"


# what a mode name may add after a "+", each the decision of that name (kernelopt.runtime.decision): channels_last
# converts the model and its 4-D inputs (e.g. "default+channels_last", or "channels_last" alone for it on
# default); cudnn_benchmark runs the mode's calls on a thread of its own with cuDNN's autotuning on
EXTRAS = ("channels_last", "cudnn_benchmark")


def settings_of(mode):
    """The decision settings (runtime/decision.compile_model's) of a mode name such as
    "max-autotune-no-cudagraphs+channels_last"."""
    parts = mode.split("+")
    base = [x for x in parts if x not in EXTRAS] or ["default"]
    if len(base) != 1:
        raise ValueError(f"mode {mode!r}: one torch.compile mode at most, extras {EXTRAS}")
    settings = {} if base[0] == "default" else {"mode": base[0]}
    for extra in EXTRAS:
        if extra in parts:
            settings[extra] = True
    return settings


def run_one(path, modes, trials, device="cuda", cudnn_benchmark=False):
    """One problem, in this process: {"eager_ms", "modes": {mode: {"ms", "compile_s"} or {"error"}}}. On the
    CPU (tests) the wall clock times it: such timings mean nothing.

    cudnn_benchmark: torch.backends.cudnn.benchmark on before anything runs. PyTorch keeps one cuDNN plan per
    convolution key (shapes, strides, dtype) per thread, found by whichever call came first, with the flag or
    without it: on one thread, default against cuDNN's autotuning is two surveys (two processes per problem);
    a mode's "+cudnn_benchmark" extra compares them in one process instead, each mode on a thread of its own."""
    import torch
    torch.backends.cudnn.benchmark = cudnn_benchmark
    from kernelopt.device import timing
    from kernelopt.problem import build_model, describe, load_problem, make_inputs
    from kernelopt.runtime.decision import call_as_loaded, compile_model
    problem = load_problem(path)
    model = build_model(problem, path, device)
    inputs = make_inputs(problem, path, 0, device)
    on_gpu = device.startswith("cuda")
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    # a mode with cudnn_benchmark runs on the autotuning thread (compile_model's CudnnBenchmarked), the others on
    # this one, as a user runs them: the handoff to that thread is the decision's cost
    threaded = [m for m in modes if "cudnn_benchmark" in m.split("+")]
    fns, row = {"eager": lambda: model(*inputs)}, {"modes": {}, "threads": threaded}
    for mode in modes:
        start = time.perf_counter()
        try:
            settings = settings_of(mode)
            compiled = compile_model(copy.deepcopy(model), settings)
            # as the loader calls it: channels_last's conversion of the inputs is part of each call's cost
            fn = lambda c=compiled, s=settings: call_as_loaded(c, inputs, s)  # noqa: E731
            with torch.no_grad():
                fn()  # compiled and first run on the thread it will be timed on (cuDNN's plans are per thread)
            sync()
        except Exception as exc:
            row["modes"][mode] = {"error": describe(exc)[:300]}
            continue
        row["modes"][mode] = {"compile_s": round(time.perf_counter() - start, 2)}
        fns[mode] = fn
    with torch.no_grad():
        samples = timing.interleaved(fns, trials=trials, warmup=3, on_gpu=on_gpu)
    row["eager_ms"] = statistics.median(samples.pop("eager"))
    row["cudnn_benchmark"] = torch.backends.cudnn.benchmark  # as the process had it when timed
    for mode, s in samples.items():
        row["modes"][mode]["ms"] = statistics.median(s)
    return row


def summary(row):
    """The problem's line: each mode's ms and speedup over default."""
    modes = row["modes"]
    base = modes.get("default", {}).get("ms")
    parts = [f"eager {row['eager_ms']:.3f} ms"]
    for mode, m in modes.items():
        if "error" in m:
            parts.append(f"{mode} FAILED {m['error'][:80]}")
        else:
            x = f" {base / m['ms']:.3f}x" if base and mode != "default" else ""
            parts.append(f"{mode} {m['ms']:.3f} ms{x} (compile {m['compile_s']:.0f} s)")
    return ", ".join(parts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("paths", nargs="+")
    p.add_argument("--deadline-s", type=float, default=400)
    p.add_argument("--problem-timeout", type=float, default=150)
    p.add_argument("--modes", default=DEFAULT_MODES)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--device", default="cuda")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="torch.backends.cudnn.benchmark on in each problem's process (see run_one)")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one problem, row as JSON on stdout
    a = p.parse_args()
    modes = a.modes.split(",")
    if a.one:
        print(json.dumps(run_one(a.paths[0], modes, a.trials, a.device, a.cudnn_benchmark)))
        return 0
    import torch
    os.makedirs(a.out, exist_ok=True)
    start, rows, left = time.time(), {}, []
    device_name = torch.cuda.get_device_name() if a.device.startswith("cuda") else a.device

    def write():  # after each problem: a call cut short keeps its rows
        with open(os.path.join(a.out, "modes.json"), "w") as f:
            json.dump({"device": device_name, "torch": torch.__version__, "modes": modes, "trials": a.trials,
                       "cudnn_benchmark": a.cudnn_benchmark,
                       "problems": rows, "not_reached": left}, f, indent=1)
    for path in problem_files(a.paths):
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        if time.time() - start > a.deadline_s:
            left.append(name)
            continue
        t0 = time.time()
        try:
            proc = subprocess.run([sys.executable, __file__, a.out, path, "--one", "--modes", a.modes,
                                   "--trials", str(a.trials), "--device", a.device]
                                  + (["--cudnn-benchmark"] if a.cudnn_benchmark else []), capture_output=True, text=True,
                                  timeout=a.problem_timeout)
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            row = {"error": f"over --problem-timeout {a.problem_timeout:.0f} s"}
        except (ValueError, IndexError):
            row = {"error": f"exit {proc.returncode}: " + (proc.stderr.strip().splitlines() or [""])[-1][:300]}
        row["wall_s"] = round(time.time() - t0, 1)
        rows[name] = row
        print(f"{name}: " + (f"FAILED {row['error']}" if "error" in row else summary(row)), flush=True)
        write()
    write()
    print(f"{len(rows)} problems, {len(left)} not reached in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
