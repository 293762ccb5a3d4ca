"""The worker's op table: name -> function(args dict) -> result dict (see server.py).

Ops that read a problem go to its input kind's ops module, chosen once here (inputs.ops_for):
inputs/module/ops.py for an nn.Module problem, inputs/triton/ops.py for a standalone Triton file
(and a Helion kernel's exported one). The rest need no problem: the machine's facts (doctor), gate
1's facts about a source (analyze), the Coder's rewrite families (rewrite), Helion's export.

Each op is stateless in meaning: everything it needs is in its arguments; a captured session is a
cache keyed by them, rebuilt by a fresh worker from the same request.
"""
import os
import platform
import sys

from kernelopt.artifact.static import analyze_grid, analyze_source
from kernelopt.inputs import kind_of, ops_for, run_input_kind
from kernelopt.worker.protocol import checked

# the ops each input kind implements, with the same answers (inputs/__init__.py)
BY_KIND = ("validate", "capture", "parse", "compile", "check", "model_check", "profile", "bench", "final_check")
# the ops only an nn.Module problem has (a standalone Triton file has no torch.compile settings to decide)
MODULE_ONLY = ("decide",)


def op_doctor(args):
    info = {"python": sys.version.split()[0], "executable": sys.executable, "platform": platform.platform()}
    try:
        import torch
        info["torch"] = torch.__version__
        info["cuda_available"] = torch.cuda.is_available()
        info["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            info["device_count"] = torch.cuda.device_count()
            info["gpu"] = torch.cuda.get_device_name()
            info["capability"] = list(torch.cuda.get_device_capability())
            info["memory_gb"] = round(torch.cuda.get_device_properties(0).total_memory / 1e9, 1)
    except ImportError as exc:
        info["torch_error"] = str(exc)
    try:
        import triton
        info["triton"] = triton.__version__
    except ImportError as exc:
        info["triton_error"] = str(exc)
    info["interpreter"] = os.environ.get("TRITON_INTERPRET") == "1"
    return info


def op_analyze(args):
    source = args.get("source")
    if source is None:
        with open(args["source_path"]) as f:
            source = f.read()
    facts = analyze_source(source)
    if args.get("grid") is not None:
        facts["grid_violations"] = analyze_grid(args["grid"], set(args["grid_names"]))
    return facts


def _helion_export(args):
    from kernelopt.inputs.helion import op_helion_export
    return op_helion_export(args)


def _rewrite(args):
    from kernelopt.coder.rewrite import op_rewrite
    return op_rewrite(args)


def _by_kind(op):
    def run(args):
        kind = run_input_kind(args) if op == "final_check" else kind_of(args)
        return getattr(ops_for(kind), "op_" + op)(args)
    run.__name__ = "op_" + op
    return run


# every op behind the protocol (protocol.json): its arguments checked and given their defaults, its result checked
TABLE = {op: checked(op, fn) for op, fn in {"doctor": op_doctor, "analyze": op_analyze, "helion_export": _helion_export,
                                             "rewrite": _rewrite, **{op: _by_kind(op) for op in BY_KIND + MODULE_ONLY}}.items()}

# by name too, for callers in-process (tests, bench scripts): ops.op_check(args) as the engine's "check"
(op_validate, op_capture, op_parse, op_compile, op_check, op_model_check, op_profile, op_bench,
 op_final_check) = (TABLE[op] for op in BY_KIND)
