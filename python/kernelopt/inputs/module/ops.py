"""The ops on an nn.Module problem (the worker's op table, worker/ops.py, sends a request here when its
input kind is "module"): name -> function(args dict) -> result dict.

Each op is stateless in meaning: everything it needs is in its arguments. The
captured session (compiled model, recorded arguments) is a cache keyed by those
arguments, rebuilt by a fresh worker from the same request.
"""
import functools
import os
import shutil

from kernelopt.artifact.inductor import parse_module
from kernelopt.device.info import NoGpuError, versions
from kernelopt.problem import file_hash
from kernelopt.library.fingerprint import device_name, inductor_fingerprints
from kernelopt.worker.failures import device_failure

_MODULE_CACHE = {}
_PARSED = {}  # (path, mtime_ns, size) -> (text, artifact): a module file is read and parsed once per version


def _torch():
    import torch
    return torch


def op_decide(args):
    """One whole-model decision's evidence (inputs/module/decisions.py)."""
    from kernelopt.inputs.module.decisions import op_decide as decide
    return decide(args)


def op_parse(args):
    from kernelopt.artifact.inductor import ArtifactError
    try:
        with open(args["module_path"], encoding="utf-8") as f:
            source = f.read()
    except UnicodeDecodeError:
        raise ArtifactError("not a UTF-8 text file") from None
    return parse_module(source)


def _as_decided(op):
    """An op on the captured session, run where the kept decision runs its convolutions: with cudnn_benchmark
    in the request's compile_settings, on the process's autotuning thread (runtime/decision.on_autotuning_thread:
    cuDNN's plans are per thread), so that the kernel search profiles, gates and times the modules with the
    decision's plans. final_check is not one: it loads the run as a user does, and times torch.compile default
    on the caller's thread."""
    @functools.wraps(op)
    def run(args):
        if (args.get("compile_settings") or {}).get("cudnn_benchmark"):
            from kernelopt.runtime.decision import on_autotuning_thread
            return on_autotuning_thread(lambda: op(args))
        return op(args)
    run.as_decided = True
    return run


def _session(args):
    from kernelopt.inputs.module.session import get_session
    return get_session(args["problem"], args["device"], args["seeds"], args.get("compile_settings"))


def op_validate(args):
    """The problem file, then the device: what a run needs before torch.compile, checked in that
    order (a broken problem file is reported as such on any machine, GPU or not)."""
    from kernelopt.problem import check_problem, load_problem
    torch = _torch()
    path = os.path.abspath(args["problem"])
    check_problem(load_problem(path), path, args["seeds"][0])
    if args["device"] == "cpu":
        raise NoGpuError("--device cpu: Inductor writes C++ kernels on a CPU, so there is no Triton kernel to "
                         "optimize there; optimize needs an NVIDIA GPU (a standalone Triton file runs on the CPU: "
                         "kernelopt optimize-kernel under TRITON_INTERPRET=1)")
    if args["device"].startswith("cuda") and not torch.cuda.is_available():
        raise NoGpuError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False); "
                         "optimize needs an NVIDIA GPU (see `kernelopt doctor`)")
    return {"problem": path, "problem_hash": file_hash(path)}


@_as_decided
def op_capture(args):
    """Compile the problem, write its output modules and weights into out_dir, return their artifacts and
    the problem's work (min_bytes, flops: problem.problem_work, once per problem, on the run's device)."""
    torch = _torch()
    op_validate(args)
    s = _session(args)
    out_dir = args["out_dir"]
    os.makedirs(os.path.join(out_dir, "baseline"), exist_ok=True)
    dev_name = device_name(args["device"])
    modules = []
    for rec in s.modules:
        path = os.path.join(out_dir, "baseline", f"module{rec.index}.py")
        with open(path, "w") as f:
            f.write(rec.source)
        artifact = rec.artifact
        modules.append({"index": rec.index, "path": path, "artifact": artifact,
                        "fingerprints": inductor_fingerprints(rec.source, artifact, dev_name)})
    torch.save(s.model.state_dict(), os.path.join(out_dir, "weights.pt"))
    shutil.copyfile(s.problem_path, os.path.join(out_dir, "problem.py"))
    return {"modules": modules, "versions": versions(), "device_name": dev_name,
            "outputs": s.output_meta, "work": s.work()}


def _parsed(path):
    """(text, artifact) of a module file, parsed once per version of the file (its path, mtime and size)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        _PARSED[key] = (text, parse_module(text))
    return _PARSED[key]


def _load(path):
    from kernelopt.device.kernels import load_module
    if path not in _MODULE_CACHE:
        if len(_MODULE_CACHE) > 64:
            _MODULE_CACHE.clear()
        _MODULE_CACHE[path] = load_module(path)
    return _MODULE_CACHE[path]


def op_compile(args):
    """Load (and so compile) a stitched module; errors come back as the op's error."""
    from kernelopt.device import kernels as K
    path = args["module_path"]
    if K.interpreting():
        names = args.get("kernels") or [k["name"] for k in _parsed(path)[1]["kernels"]]
        for name in names:
            _kernel_from_module(path, name)
        return {"compiled": True}
    mod = _load(path)
    for name in args.get("kernels") or []:
        getattr(mod, name).precompile()
    return {"compiled": True}


def _copy_into(dst_sites, src_sites):
    """Restores launch arguments (tensors in place) from pristine copies, outside any timed region."""
    for dst, src in zip(dst_sites, src_sites):
        for d, s_ in zip(dst, src):
            if hasattr(d, "copy_"):
                d.copy_(s_)


def _kernel_from_module(path, name):
    from kernelopt.device import kernels as K
    if K.interpreting():
        src, art = _parsed(path)
        k = next(k for k in art["kernels"] if k["name"] == name)
        s, e = k["source_span"]
        return K.load_kernel_source(src.encode()[s:e].decode(), name)
    return getattr(_load(path), name)


@_as_decided
def op_check(args):
    """Gate 2 evidence: candidate kernel vs the original on the arguments of each launch site, with
    each launch's stale and repeated runs (gate_checks.check_launches, as for a standalone file)."""
    from kernelopt.gates import launches as gate_checks
    from kernelopt.device import kernels as K
    torch = _torch()
    name = args["kernel"]
    cand = _kernel_from_module(args["candidate_module"], name)
    records = []  # (seed, launch index, source, launch state)
    if args.get("problem"):
        s = _session(args)
        module = args["module"]
        rec = s.modules[module]
        base = rec.kernel(name)
        sites = len(s.launches(module, s.seeds[0], name))  # one graph: as many launches for every seed

        def load(seed, i):  # the seed's launches are recorded when check_launches reaches the seed
            return gate_checks.Call(s.launches(module, seed, name)[i])
        for seed in s.seeds:
            for i in range(sites):
                records.append((seed, i, "model", gate_checks.Lazy(lambda seed=seed, i=i: load(seed, i))))
        base_src_module = rec.path
    else:
        base_src_module = args["baseline_module"]
        base = _kernel_from_module(base_src_module, name)
    if args.get("synthetic_seeds"):
        art = _parsed(base_src_module)[1]
        sites = [l for l in art["launches"] if l["kernel"] == name]
        device = "cpu" if K.interpreting() else "cuda"
        for seed in args["synthetic_seeds"]:
            for i, site in enumerate(sites):
                records.append((seed, i, "synthetic", gate_checks.Call(K.synthetic_args(art, site, seed, device))))

    def sync():
        if torch.cuda.is_available() and not K.interpreting():
            torch.cuda.synchronize()

    def halves():  # called after the candidate ran: the copies take the config it chose
        copies = [K.pin_config(k, cand) for k in _program_halves(args["candidate_module"], name) or []]
        return tuple((lambda c, k=k: K.launch(k, c.args)) for k in copies) or None
    return gate_checks.check_launches(records, lambda c: K.launch(base, c.args), lambda c: K.launch(cand, c.args),
                                      list(getattr(base.fn, "arg_names", [])), args["tolerances"], args["repeats"],
                                      sync, halves=halves, stored=gate_checks.stored_by(base), stop_early=True)


def _program_halves(path, name):
    """The candidate kernel's upper-half and lower-half copies (gate_checks.program_halves), each
    loaded the way the candidate is, from a copy of its module beside it; None where there are none."""
    from kernelopt.gates import launches as gate_checks
    text, art = _parsed(path)
    data = text.encode()
    k = next(k for k in art["kernels"] if k["name"] == name)
    s, e = k["source_span"]
    texts = gate_checks.program_halves(data[s:e].decode(), name)
    if texts is None:
        return None
    stem = path[:-3] if path.endswith(".py") else path
    kernels = []
    for half, text in zip(("upper", "lower"), texts):
        with open(f"{stem}.{half}_half.py", "wb") as f:
            f.write(data[:s] + text.encode() + data[e:])
        kernels.append(_kernel_from_module(f"{stem}.{half}_half.py", name))
    return kernels


@_as_decided
def op_model_check(args):
    """Gate 3 evidence: stitched module vs baseline, and vs a float64 eager reference where they differ."""
    s = _session(args)
    module = args["module"]
    cand = _load(args["candidate_module"])
    # one seed at a time: a seed's outputs and reference are gone before the next seed's are made
    return {"runs": [_model_run(s, module, cand, seed, args["tolerances"]) for seed in s.seeds]}


def _model_run(s, module, cand, seed, tolerances):
    """Gate 3's evidence on one seed: each output of the stitched module vs the baseline's, and both
    vs the float64 reference where they differ (one module only: a graph break's later modules see
    eager code's results in between, which the reference does not break down)."""
    from kernelopt.device import kernels as K
    from kernelopt.gates.outputs import compare_outputs
    from kernelopt.inputs.module.session import flatten, synchronize
    torch = _torch()
    rec = s.modules[module]
    run = {"seed": seed, "error": None, "outputs": []}
    try:
        with torch.no_grad():
            base_out = flatten(rec.call(K.clone_args(s.call_args(module, seed))))
            cand_out = flatten(cand.call(K.clone_args(s.call_args(module, seed))))
        synchronize()
    except Exception as exc:
        if device_failure(exc):
            raise  # the device's, not the candidate's: the server answers it as such
        run["error"] = f"{type(exc).__name__}: {exc}"[:500]
        return run
    reference = (lambda: s.reference(seed)) if len(s.modules) == 1 else None
    run["outputs"] = compare_outputs(base_out, cand_out, tolerances, reference)
    return run


def _storage_bytes(kernel, sites, times):
    """Over a kernel's launches: each distinct tensor storage an argument views, once per launch, times
    times(parameter name) of its bytes (the first argument naming that storage with times above 0 decides:
    an argument counted 0 times does not hide a later one viewing the same storage)."""
    torch = _torch()
    nbytes = 0
    for a in sites:
        seen = set()
        for name, t in zip(kernel["params"], a):
            if isinstance(t, torch.Tensor) and times(name) > 0 and t.untyped_storage().data_ptr() not in seen:
                seen.add(t.untyped_storage().data_ptr())
                nbytes += t.numel() * t.element_size() * times(name)
    return nbytes


def launch_bytes(kernel, sites):
    """The bytes a kernel's launches move at least: each distinct tensor storage an argument views,
    once per launch, twice where the kernel updates that argument in place (read, then written)."""
    updated = set(kernel["mutated_args"])
    return _storage_bytes(kernel, sites, lambda name: 2 if name in updated else 1)


def launch_reread_bytes(kernel, sites):
    """The bytes a looped reduction's later passes over its rows read again (the artifact's row_pass_loads:
    {pointer: passes}), over its launches: what launch_bytes leaves out when rows do not stay in L2 between
    passes; each storage once per launch, as launch_bytes counts it."""
    passes = kernel.get("row_pass_loads") or {}
    return _storage_bytes(kernel, sites, lambda name: passes.get(name, 1) - 1) if passes else 0


@_as_decided
def op_profile(args):
    """Per-kernel CUDA-event times inside the real call(), bytes each launch touches, chosen configs."""
    from kernelopt.device import kernels as K
    from kernelopt.device import timing
    s = _session(args)
    module = args["module"]
    rec = s.modules[module]
    seed = s.seeds[0]
    reps = args["reps"]
    art = rec.artifact
    kernels = []
    for k in art["kernels"]:
        obj = rec.kernel(k["name"])
        sites = s.launches(module, seed, k["name"])  # one kernel's launches held at a time
        nbytes = launch_bytes(k, sites)

        # time on copies: a kernel that updates a buffer in place must not change the recorded
        # launch arguments the correctness gate later checks on
        work = [K.clone_args(a) for a in sites]

        def run_all(_obj=obj, _work=work):
            for a in _work:
                K.launch(_obj, a)

        def restore(_name, _work=work, _sites=sites, _mutates=bool(k["mutated_args"])):
            if _mutates:
                _copy_into(_work, _sites)

        samples = timing.interleaved({"k": run_all}, trials=reps, before=restore)["k"] if sites else []
        kernels.append({"name": k["name"], "kind": k["kind"], "launches": len(sites), "bytes": nbytes,
                        "reread_bytes": launch_reread_bytes(k, sites), "samples_ms": samples,
                        "config": K.config_of(obj)})
        del work, sites, run_all, restore
    # call() empties the list it gets, and an inference graph does not write its inputs: a
    # shallow copy per call keeps the timed region free of tensor copies
    call_args = s.call_args(module, seed)
    module_samples = timing.interleaved({"m": lambda: rec.call(list(call_args))}, trials=reps)["m"]
    return {"module_samples_ms": module_samples, "kernels": kernels,
            "bandwidth_gbps": timing.copy_bandwidth_gbps(), "versions": versions()}


@_as_decided
def op_bench(args):
    """Interleaved timing samples: the baseline and each candidate, for one kernel or the whole module."""
    from kernelopt.device import kernels as K
    from kernelopt.device import timing
    s = _session(args)
    module = args["module"]
    rec = s.modules[module]
    seed = s.seeds[0]
    trials, warmup = args["trials"], args["warmup"]
    fns = {}
    before = None
    if args["mode"] == "kernel":
        name = args["kernel"]
        pristine = s.launches(module, seed, name)
        # one working copy for every variant: each is restored from the recorded launches before it
        # runs (or, with restore off, writes only what every variant overwrites), so the variants
        # need not hold a copy each
        work = [K.clone_args(a) for a in pristine]
        objs = {"baseline": rec.kernel(name)}
        for path in args["candidates"]:
            objs[path] = getattr(_load(path), name)

        def make(key):
            def run():
                for a in work:
                    K.launch(objs[key], a)
            return run

        def restore(key):
            _copy_into(work, pristine)

        fns = {key: make(key) for key in objs}
        before = restore if args["restore"] else None
    else:
        args_seed = s.call_args(module, seed)  # shallow copies per call, as in op_profile
        fns["baseline"] = lambda: rec.call(list(args_seed))
        for path in args["candidates"]:
            mod = _load(path)
            fns[path] = (lambda m=mod: m.call(list(args_seed)))
    return {"samples_ms": timing.interleaved(fns, trials=trials, warmup=warmup, before=before)}


def op_final_check(args):
    """End-to-end: the optimized model as users load it vs torch.compile and float64 eager, on fresh
    seeds. Frees the optimization's cached session first, then per seed holds the float64 reference
    and one variant's outputs at a time; the timing keeps no variant's outputs."""
    from kernelopt.runtime.loader import load_run
    from kernelopt.device import timing
    from kernelopt.problem import make_inputs
    from kernelopt.inputs.module.session import release_sessions
    import copy
    torch = _torch()
    release_sessions()
    run_dir = args["run_dir"]
    device = args["device"]
    loaded = load_run(run_dir, device=device)
    problem, model = loaded.problem, loaded.model
    torch._dynamo.reset()
    # its own copy: Dynamo's guards tell two compiles of one module object apart by nothing else
    baseline = torch.compile(copy.deepcopy(model))
    runs = []
    for seed in args["seeds"]:
        inputs = make_inputs(problem, loaded.problem_path, seed, device)
        runs.append({"seed": seed, "outputs": _final_outputs(model, loaded, baseline, inputs, args["tolerances"])})
        del inputs
    _release()
    inputs = make_inputs(problem, loaded.problem_path, args["seeds"][0], device)
    fns = {"eager": lambda: model(*inputs), "baseline": lambda: baseline(*inputs), "optimized": lambda: loaded(*inputs)}
    trials = args["trials"]
    with torch.no_grad():
        samples = timing.interleaved(fns, trials=trials, warmup=3)
        gpu_samples = timing.host_hidden(fns, trials=trials)
    return {"runs": runs, "substituted": loaded.substituted(), "samples_ms": samples, "gpu_samples_ms": gpu_samples}


def _final_outputs(model, optimized, baseline, inputs, tolerances):
    """One seed's end-to-end evidence per output: the float64 eager reference first (its float64
    inputs dropped once it is made), then the optimized model's outputs compared with it and
    dropped, then the baseline's."""
    import copy
    from kernelopt.gates.compare import compare_tensors, error_vs_reference, tolerance_for
    from kernelopt.inputs.module.session import flatten
    torch = _torch()
    model64 = copy.deepcopy(model).double()
    with torch.no_grad():
        ref = flatten(model64(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                                for x in inputs]))
    del model64
    _release()
    outs = []
    with torch.no_grad():
        opt = flatten(optimized(*inputs))
    for i, (o, r) in enumerate(zip(opt, ref)):
        a, rt = tolerance_for(o.dtype, tolerances)
        ev = compare_tensors(o, r, a, rt, round_expected_to=o.dtype if o.dtype != r.dtype else None)
        outs.append({"index": i, "mismatches_vs_eager": ev["mismatches"] + ev["nan_mismatches"] + ev["inf_mismatches"],
                     "max_abs_err_vs_eager": ev["max_abs_err"], "err_optimized": error_vs_reference(o, r)})
    del opt
    _release()
    with torch.no_grad():
        base = flatten(baseline(*inputs))
    for out, b, r in zip(outs, base, ref):
        out["err_baseline"] = error_vs_reference(b, r)
    return outs


def _release():
    from kernelopt.inputs.module.session import release_memory
    release_memory()
