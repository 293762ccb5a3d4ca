"""Where channels_last's conversion of the inputs goes, per network with convolutions, on the GPU machine:

    python3 bench/gpu/channels_last_placement.py PROBLEM... [--trials 20] [--device cuda]

Timed interleaved (device/timing: CUDA events, L2 flushed) on seed 0's inputs against torch.compile default:
- converted_once: the channels_last model on inputs converted once, outside the timing (what the decision gate
  measured before 7f88d88: 1.107x on level3/11 where the run was 0.872x end to end);
- converted_in_call: the inputs converted in every call (as the loader runs the decision now);
- converted_in_graph: the conversion inside the compiled graph, where Inductor may fuse it with the first
  kernel (not a decision yet: this says whether it should be).
Each variant's largest difference from default's outputs is recorded too (not a gate). One line per problem
and the figures as JSON on the last line. On a CPU (tests) the timings mean nothing.
"""
import argparse
import copy
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

from kernelopt.device import timing  # noqa: E402
from kernelopt.problem import build_model, flatten, load_problem, make_inputs  # noqa: E402
from kernelopt.runtime.decision import decision_inputs  # noqa: E402

CHANNELS_LAST = {"channels_last": True}


class ConvertedInGraph(torch.nn.Module):
    """The model with its 4-D inputs converted to channels_last in its forward (so inside the graph)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return self.model(*decision_inputs(list(inputs), CHANNELS_LAST))


def measure(path, trials=20, device="cuda"):
    problem = load_problem(path)
    model = build_model(problem, path, device)
    inputs = make_inputs(problem, path, 0, device)
    once = decision_inputs(inputs, CHANNELS_LAST)
    default = torch.compile(copy.deepcopy(model))
    converted = torch.compile(copy.deepcopy(model).to(memory_format=torch.channels_last))
    in_graph = torch.compile(ConvertedInGraph(copy.deepcopy(model).to(memory_format=torch.channels_last)))
    fns = {"default": lambda: default(*inputs), "converted_once": lambda: converted(*once),
           "converted_in_call": lambda: converted(*decision_inputs(inputs, CHANNELS_LAST)),
           "converted_in_graph": lambda: in_graph(*inputs)}
    on_gpu = device.startswith("cuda")
    with torch.no_grad():
        # not a gate: how far each variant's outputs are from default's, so that a wrong one shows
        base = [t.float() for t in flatten(fns["default"]())]
        diff = {name: max(float((t.float() - b).abs().max()) for t, b in zip(flatten(fn()), base))
                for name, fn in fns.items() if name != "default"}
        samples = timing.interleaved(fns, trials=trials, warmup=3, on_gpu=on_gpu)
    ms = {name: statistics.median(s) for name, s in samples.items()}
    return {"ms": ms, "speedup": {name: ms["default"] / v for name, v in ms.items() if name != "default"},
            "max_abs_diff_vs_default": diff}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("problems", nargs="+")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    rows = {}
    for path in a.problems:
        try:
            rows[path] = measure(path, a.trials, a.device)
            print(os.path.basename(path) + ": " + ", ".join(f"{k} {v:.3f}x" for k, v in rows[path]["speedup"].items()),
                  flush=True)
        except Exception as exc:  # noqa: BLE001 - a problem that fails is its row's error; the others go on
            rows[path] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}
            print(f"{os.path.basename(path)}: FAILED {rows[path]['error']}", flush=True)
        torch._dynamo.reset()
    print(json.dumps({"device": a.device, "trials": a.trials, "problems": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
