"""The input kinds, one seam: an nn.Module problem (module/), a standalone Triton kernel file
(triton/), a Helion kernel (helion.py: exported to a standalone Triton file, then optimized as one).
Each kind's ops module implements the same ops with the same answers (validate, capture, parse,
compile, check, model_check, profile, bench, final_check); the worker's op table picks the module
once per request (ops_for)."""
import json
import os

KINDS = ("module", "triton", "helion")


def kind_of(args):
    """The request's input kind: "module" (also when absent), "triton" or "helion"."""
    kind = args.get("input_kind") or "module"
    if kind not in KINDS:
        raise ValueError(f"unknown input_kind {kind!r} (module, triton or helion)")
    return kind


def run_input_kind(args):
    """final_check's input kind: the request's, else the run directory's (manifest.json, then the
    options.json the engine writes), else module."""
    if args.get("input_kind"):
        return kind_of(args)
    for name in ("manifest.json", "options.json"):
        try:
            with open(os.path.join(args["run_dir"], name)) as f:
                kind = json.load(f).get("input_kind")
        except (OSError, ValueError, AttributeError):
            continue
        if kind:
            return kind_of({"input_kind": kind})
    return "module"


def ops_for(kind):
    """The ops module of an input kind (a Helion run optimizes its exported standalone file)."""
    if kind == "module":
        from kernelopt.inputs.module import ops
    else:
        from kernelopt.inputs.triton import ops
    return ops
