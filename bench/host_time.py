"""Where a model call's end-to-end time goes beyond its kernels, timed as the bench times it.

Run from the repository root on a GPU machine:  python3 bench/host_time.py level1/10_layer_norm ...
For torch.compile(model) and the eager model of each problem, prints and writes $OUT/exp1.json:
  e2e_ms         the bench's timing: L2 flushed (256 MB write), CUDA events around one call, median of 40
  e2e_padded_ms  the same with the GPU held busy (torch.cuda._sleep, 1e6 cycles) between the flush and the
                 start event, so the host has issued the whole call before the start event fires: GPU alone
  cpu_us         host time to issue one call (perf_counter, synchronized before), median of 40
  kernels        the kernels of one call and their durations (torch.profiler)
e2e_ms - e2e_padded_ms is the host time that the flush does not hide; no kernel rewrite can remove it.
"""
import sys, statistics, json, os
sys.path.insert(0, "python")
import torch
from kernelopt.problem import load_problem, build_model, make_inputs
from kernelopt.device import timing

def e2e(fn, trials=40, pad_cycles=0):
    """Median of `trials` bench-style timings (timing.time_once: L2 flushed, then the GPU held for pad_cycles)."""
    return statistics.median(timing.time_once(fn, hold_cycles=pad_cycles) for _ in range(trials))

def cpu_us(fn, trials=40):
    return timing.host_ms(fn, calls=trials) * 1e3

def kernels(fn):
    from torch.profiler import profile, ProfilerActivity
    timing.flush_l2(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn(); torch.cuda.synchronize()
    ks = []
    for ev in p.events():
        if ev.device_type.name == "CUDA":
            ks.append((ev.name[:70], round(ev.device_time / 1000.0, 4) if hasattr(ev, "device_time") else round(ev.cuda_time / 1000.0, 4)))
    return ks

res = {}
for name in sys.argv[1:]:
    path = f"bench/problems/{name}.py"
    prob = load_problem(path)
    model = build_model(prob, path, "cuda")
    inputs = make_inputs(prob, path, 0, "cuda")
    torch._dynamo.reset()
    comp = torch.compile(model)
    r = {}
    with torch.no_grad():
        for label, fn in (("compiled", lambda: comp(*inputs)), ("eager", lambda: model(*inputs))):
            for _ in range(3): fn()
            torch.cuda.synchronize()
            r[label] = {"e2e_ms": round(e2e(fn), 4), "e2e_padded_ms": round(e2e(fn, pad_cycles=1_000_000), 4),
                        "cpu_us": round(cpu_us(fn), 1), "kernels": kernels(fn)}
    # flush alone
    r["flush_ms"] = round(e2e(lambda: timing.flush_l2(), trials=10), 4)
    print(name, json.dumps(r), flush=True)
    res[name] = r
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "exp1.json"), "w"), indent=1)
