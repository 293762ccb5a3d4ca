"""Whole-model decisions (`kernelopt optimize --decisions`): the `decide` op's evidence for one decision.

A decision is a fixed set of torch.compile settings from the engine's whitelist (src/engine/decisions):
`mode`, Inductor `options` (coordinate_descent_tuning, combo_kernels, freezing; a composition of decisions
also the options a mode stands for), `channels_last` and `cudnn_benchmark` (cuDNN's autotuning, the calls on a
thread of their own). The protocol's schema admits only those keys; this module applies them and measures, the
engine decides (gate 1 on the settings, gate 3's model_gate on `runs`, the bootstrap interval on `samples_ms`).

Memory: the decision's compiled model and torch.compile default's are the only compiled models alive;
both are dropped, Dynamo reset and the allocator's cache emptied before the op returns.
"""
import copy
import itertools

import torch

from kernelopt.problem import build_model, flatten, load_problem, make_inputs
from kernelopt.runtime.decision import call_as_loaded, compile_model, decision_inputs, uses_cudagraphs
from kernelopt.worker.failures import device_failure
from kernelopt.worker.phases import phase


def has_convolutions(model):
    return any(isinstance(m, torch.nn.modules.conv._ConvNd) for m in model.modules())


def not_applicable(model, device, settings):
    """Why the decision cannot run here (skipped, not failed), or None."""
    if uses_cudagraphs(settings) and not str(device).startswith("cuda"):
        return f"CUDA graphs need a CUDA device (this run's device is {device})"
    if settings.get("channels_last") and not has_convolutions(model):
        return "channels_last applies only to models with convolutions (this one has none)"
    if settings.get("cudnn_benchmark"):
        if not str(device).startswith("cuda"):
            return f"cuDNN autotuning needs a CUDA device (this run's device is {device})"
        if not has_convolutions(model):
            return "cuDNN autotuning applies only to models with convolutions (this one has none)"
    if settings == {"options": {"freezing": True}} and not any(True for _ in itertools.chain(model.parameters(),
                                                                                           model.buffers())):
        return "freezing folds weights into constants, and this model has none (it would compile as default)"
    return None


def mutates_inputs(model, inputs):
    """True when the eager model writes any of its input tensors (CUDA graphs would replay stale copies)."""
    before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    work = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        model(*work)
    return any(isinstance(a, torch.Tensor) and not torch.equal(a, b) for a, b in zip(work, before))


def reference(model, problem, path, seed, device):
    """Float64 eager outputs of the model on the seed's inputs."""
    model64 = copy.deepcopy(model).double()
    ins = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
           for x in make_inputs(problem, path, seed, device)]
    with torch.no_grad():
        out = flatten(model64(*ins))
    del model64, ins
    return out


def _outputs(compiled, inputs):
    with torch.no_grad():
        return [t.clone() for t in flatten(compiled(*inputs))]


def correctness_runs(model, default, decided, problem, path, seeds, device, settings, tolerances):
    """model_check's evidence per seed: the decision's outputs vs torch.compile default's, both vs the
    float64 reference where they differ (gates/outputs.compare_outputs, as gate 3). Each model compiles at its
    first call, the first seed's: those two calls are their own phases (the compiles' cost in phases_s)."""
    from kernelopt.gates.outputs import compare_outputs
    from kernelopt.problem import describe
    runs = []
    for seed in seeds:
        run = {"seed": seed, "error": None, "outputs": []}
        try:
            inputs = make_inputs(problem, path, seed, device)
            first = seed == seeds[0]
            with phase("decide.compile_default" if first else "decide.correctness"):
                base = _outputs(default, inputs)
            with phase("decide.compile_decision" if first else "decide.correctness"):
                cand = _outputs(decided, decision_inputs(inputs, settings))
            run["outputs"] = compare_outputs(base, cand, tolerances,
                                             lambda seed=seed: reference(model, problem, path, seed, device),
                                             error_line=describe)
        except Exception as exc:
            if device_failure(exc):
                raise  # not the decision's error: out of memory is retried, a lost context restarts the worker
            run["error"] = describe(exc)[:500]
        runs.append(run)
    return runs


def outputs_overwritten(out, kept):
    """Whether the outputs an earlier call returned changed since (kept: their values then). Cudagraph
    trees may refuse to read an output a later replay overwrote: that refusal is the overwrite seen."""
    try:
        return any(not torch.equal(t, k) for t, k in zip(out, kept))
    except RuntimeError as exc:
        if "overwritten" in str(exc):
            return True
        raise


def _same_answers(a, b, tolerances):
    """Outputs of two calls on the same inputs agree: within the run's tolerances (a convolution's algorithm
    or an atomic reduction may differ in the last bits from call to call), NaN and infinities where they
    were (gates/compare, chunk by chunk). A replay that read stale inputs gives another seed's answers, far
    outside them."""
    from kernelopt.gates.compare import compare_tensors, tolerance_for
    for x, y in zip(a, b):
        ev = compare_tensors(x, y, *tolerance_for(y.dtype, tolerances))
        if ev["mismatches"] or ev["nan_mismatches"] or ev["inf_mismatches"]:
            return False
    return True


def cudagraph_checks(decided, model, problem, path, seeds, device, settings, tolerances):
    """What CUDA graphs may get wrong: outputs of one call overwritten by the next (the loader then clones),
    and inputs at new addresses (a fresh copy of the first seed's inputs must give the same answers)."""
    first = decision_inputs(make_inputs(problem, path, seeds[0], device), settings)
    with torch.no_grad():
        out = flatten(decided(*first))
        kept = [t.clone() for t in out]
        decided(*decision_inputs(make_inputs(problem, path, seeds[-1], device), settings))
        overwritten = outputs_overwritten(out, kept)
        moved = [x.clone() if isinstance(x, torch.Tensor) else x for x in first]
        del first
        again = [t.clone() for t in flatten(decided(*moved))]
    new_addresses_ok = len(again) == len(kept) and _same_answers(again, kept, tolerances)
    return {"outputs_overwritten": overwritten, "new_addresses_ok": new_addresses_ok}


def release():
    from kernelopt.inputs.module.session import release_memory
    torch._dynamo.reset()
    release_memory()


def op_decide(args):
    """The evidence for one decision: skipped (with the reason), refused (with the reason), or
    correctness runs on every seed, the decision's checks and interleaved timing samples against
    torch.compile default."""
    from kernelopt.device import timing
    from kernelopt.inputs.module.session import release_sessions
    release_sessions()  # the capture's compiled model is not needed here: one model at a time
    path, device, seeds = args["problem"], args["device"], args["seeds"]
    settings = args["decision"]["settings"]
    result = {"decision": args["decision"]["name"], "skipped": None, "refused": None, "runs": [],
              "checks": {}, "samples_ms": {}}
    problem = load_problem(path)
    model = build_model(problem, path, device)
    result["skipped"] = not_applicable(model, device, settings)
    if result["skipped"]:
        return result
    if uses_cudagraphs(settings) and mutates_inputs(model, make_inputs(problem, path, seeds[0], device)):
        result["refused"] = "the model writes its inputs: a CUDA graph would replay on its static copies"
        return result
    release()
    # the baseline on this thread, as a user runs torch.compile: a decision's own costs (cudnn_benchmark's
    # handoff to a thread of its own) are in its time, as they are in a loaded run's
    default = torch.compile(copy.deepcopy(model))
    decided = compile_model(copy.deepcopy(model), settings)
    try:
        with phase("decide.correctness"):
            result["runs"] = correctness_runs(model, default, decided, problem, path, seeds, device, settings,
                                              args["tolerances"])
        if any(run["error"] for run in result["runs"]):
            return result  # a seed that raised fails the model gate: nothing to check or time
        if uses_cudagraphs(settings):
            with phase("decide.cudagraph_checks"):
                result["checks"] = cudagraph_checks(decided, model, problem, path, seeds, device, settings,
                                                     args["tolerances"])
        inputs = make_inputs(problem, path, seeds[0], device)
        # the candidate timed as the loader calls it: the inputs as the user has them, converted in each call
        # (channels_last), outputs cloned (CUDA graphs)
        with torch.no_grad(), phase("decide.timing"):
            result["samples_ms"] = timing.interleaved(
                {"baseline": lambda: default(*inputs),
                 "candidate": lambda: call_as_loaded(decided, inputs, settings)},
                trials=args["trials"], warmup=3, on_gpu=str(device).startswith("cuda"))
        del inputs
    finally:
        del default, decided
        with phase("decide.release"):
            release()
    return result
