"""The host time a call costs when it is handed to the autotuning thread (the cudnn_benchmark decision's calls,
runtime/decision.on_autotuning_thread), on the GPU machine:

    python3 bench/gpu/handoff.py PROBLEM [--calls 20] [--device cuda]

With the GPU held busy (torch.cuda._sleep) while the host issues a batch of calls, the wall time per call is
host time alone. Per call, in microseconds: a tiny in-place add called directly, on the autotuning thread (what
the decision uses: grad mode, inference mode and stream carried, the flag set and restored) and through a bare
queue thread (the handoff alone); the problem's torch.compile default called directly and through the bare
thread, and its `CudnnBenchmarked` model (compile_model's, as the decision runs it). Prints one line each and
writes the figures as JSON on the last line. On a CPU (tests) the timings mean nothing.
"""
import argparse
import copy
import json
import os
import queue
import statistics
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

from kernelopt.problem import build_model, load_problem, make_inputs  # noqa: E402
from kernelopt.runtime.decision import compile_model, on_autotuning_thread  # noqa: E402


class BareThread:
    """The handoff alone: a queue each way, nothing carried."""

    def __init__(self, fn):
        self.fn, self.calls, self.results = fn, queue.SimpleQueue(), queue.SimpleQueue()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            self.results.put(self.calls.get()())

    def __call__(self):
        self.calls.put(self.fn)
        return self.results.get()


def host_us(fn, calls, on_gpu, reps=5):
    """Median over reps of the wall time per call to issue `calls` calls, the GPU kept busy meanwhile."""
    fn()
    if on_gpu:
        torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        if on_gpu:
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time: the host issues everything while it runs
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - start) / calls * 1e6)
        if on_gpu:
            torch.cuda.synchronize()
    return statistics.median(out)


def measure(path, calls=20, device="cuda"):
    on_gpu = device.startswith("cuda")
    x = torch.zeros(1024, device=device)
    add = lambda: x.add_(1)  # noqa: E731
    row = {"add": {"direct": host_us(add, 200, on_gpu),
                   "autotuning_thread": host_us(lambda: on_autotuning_thread(add), 200, on_gpu),
                   "bare_thread": host_us(BareThread(add), 200, on_gpu)}}
    problem = load_problem(path)
    model = build_model(problem, path, device)
    inputs = make_inputs(problem, path, 0, device)
    with torch.no_grad():
        default = torch.compile(copy.deepcopy(model))
        call = lambda: default(*inputs)  # noqa: E731
        decided = compile_model(copy.deepcopy(model), {"cudnn_benchmark": True})
        row["model"] = {"direct": host_us(call, calls, on_gpu), "bare_thread": host_us(BareThread(call), calls, on_gpu),
                        "cudnn_benchmarked": host_us(lambda: decided(*inputs), calls, on_gpu)}
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("problem")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    row = measure(a.problem, a.calls, a.device)
    for what, figures in row.items():
        print(f"{what}: " + ", ".join(f"{k} {v:.1f} us" for k, v in figures.items()), flush=True)
    print(json.dumps({"problem": a.problem, "device": a.device, "host_us_per_call": row}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
