"""The ops on a standalone Triton kernel file: the same ops, with the same answers, as an nn.Module
problem's (inputs/module/ops.py), so the engine reads them alike."""
import os
import sys

from kernelopt.artifact.triton_file import KIND, parse_artifact, parse_file
from kernelopt.problem import ProblemError, file_hash
from kernelopt.worker.failures import device_failure
from kernelopt.inputs.triton.session import (_SESSIONS, _arg_names, _bandwidth, _call_inputs, _checks, _error_line,
                                             _inputs, _interleaved, _kernel_obj, _load_cached, _on_gpu, _read, _restore,
                                             _sync, _torch, device_of, flatten, get_session, interpreting, load_file)


def op_validate(args):
    s = get_session(args)
    return {"problem": s.path, "problem_hash": file_hash(s.path)}


def op_capture(args):
    import shutil
    from kernelopt.device.info import versions as _versions
    s = get_session(args)
    out_dir = args["out_dir"]
    os.makedirs(os.path.join(out_dir, "baseline"), exist_ok=True)
    path = os.path.join(out_dir, "baseline", "module0.py")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(s.source)
    shutil.copyfile(s.path, os.path.join(out_dir, "problem.py"))
    first = s.outputs[s.seeds[0]]
    from kernelopt.library.fingerprint import device_name
    dev_name = device_name(s.device)
    return {"modules": [{"index": 0, "path": path, "artifact": s.artifact(), "fingerprints": s.fingerprints(dev_name)}],
            "versions": _versions(), "device_name": dev_name,
            "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype)} for t in first],
            "input_kind": "triton", "reference": s.has_reference}


def _launch_defaults():
    """Triton's num_warps and num_stages for a launch that passes neither: the active backend's
    option defaults (CUDA: 4 and 3), or CUDA's where no GPU driver is active (the interpreter)."""
    try:
        from triton.compiler.compiler import make_backend
        from triton.runtime.driver import driver
        opts = make_backend(driver.active.get_current_target()).parse_options({})
        return {"num_warps": int(opts.num_warps), "num_stages": int(opts.num_stages)}
    except Exception:
        return {"num_warps": 4, "num_stages": 3}


def _config(s, name, obj):
    """The launch config of a kernel's first launch: an autotuner's choice, else the constexprs the
    launcher passed (by keyword or position) and num_warps/num_stages (Triton's defaults where not passed)."""
    best = getattr(obj, "best_config", None)
    if best is not None:
        cfg = dict(best.kwargs)
        cfg["num_warps"], cfg["num_stages"] = best.num_warps, best.num_stages
        return cfg
    first = next((l for l in s.launches[s.seeds[0]] if l.kernel == name), None)
    if first is None:
        return None
    constexprs = next(k["constexprs"] for k in s.facts["kernels"] if k["name"] == name)
    passed = dict(zip(_arg_names(obj), first.args))
    passed.update(first.kwargs)
    cfg = {k: v for k, v in passed.items()
           if (k in constexprs or k in ("num_warps", "num_stages")) and isinstance(v, (int, float, bool, str))}
    for k, v in _launch_defaults().items():
        cfg.setdefault(k, v)
    return cfg


def op_profile(args):
    from kernelopt.device.info import versions as _versions
    torch = _torch()
    s = get_session(args)
    seed = s.seeds[0]
    reps = args["reps"]
    kernels = []
    for k in s.facts["kernels"]:
        name = k["name"]
        obj = s.objs.get(name)
        sites = s.launches_of(seed, name)
        work = [l.copy() for l in sites]

        def run_all(_obj=obj, _work=work):
            for l in _work:
                l.run(_obj)

        def restore(_key, _work=work, _sites=sites):
            for w, p in zip(_work, _sites):
                _restore(w, p)

        with torch.no_grad():
            samples = (_interleaved({"k": run_all}, trials=reps, before=restore, device=s.device)["k"]
                       if sites else [])
        kernels.append({"name": name, "kind": KIND, "launches": len(sites),
                        "bytes": sum(l.nbytes() for l in sites), "samples_ms": samples,
                        "config": _config(s, name, obj) if obj is not None else None})
    inputs = s.inputs[seed]
    with torch.no_grad():
        module_samples = _interleaved({"m": lambda: s.mod.launch(*inputs)}, trials=reps, device=s.device)["m"]
    return {"module_samples_ms": module_samples, "kernels": kernels,
            "bandwidth_gbps": _bandwidth(s.device), "versions": _versions()}


def op_check(args):
    """Gate 2 evidence: the candidate file's kernel vs the original on every recorded launch, for each
    seed ("model" runs), with each launch's stale and repeated runs (gate_checks.check_launches)."""
    s = get_session(args)
    name = args["kernel"]
    base = s.objs.get(name)
    if base is None:
        raise ProblemError(f"{s.path}: defines no launched @triton.jit kernel `{name}`")
    cand_path = args["candidate_module"]
    cand = _kernel_obj(_load_cached(cand_path), name, cand_path)
    records = [(seed, i, "model", rec) for seed in s.seeds for i, rec in enumerate(s.launches_of(seed, name))]
    checks = _checks()
    from kernelopt.device.kernels import pin_config  # imports torch, as _checks()

    def halves():  # the upper-half and lower-half copies (gate_checks.program_halves), after the candidate ran
        texts = checks.program_halves(_read(cand_path), name) or []
        copies = [pin_config(_kernel_obj(load_file(cand_path, t), name, cand_path), cand) for t in texts]
        return tuple((lambda l, k=k: l.run(k)) for k in copies) or None
    return checks.check_launches(records, lambda l: l.run(base), lambda l: l.run(cand), _arg_names(base),
                                 args["tolerances"], args["repeats"], lambda: _sync(s.device), _error_line,
                                 halves=halves, stored=checks.stored_by(base), stop_early=True)


def _model_runs(s, cand_mod, tolerances):
    from kernelopt.gates.outputs import compare_outputs
    torch = _torch()
    runs = []
    for seed in s.seeds:
        run = {"seed": seed, "error": None, "outputs": []}
        try:
            with torch.no_grad():
                base_out = flatten(s.mod.launch(*_call_inputs(s.inputs[seed])))
                cand_out = flatten(cand_mod.launch(*_call_inputs(s.inputs[seed])))
            _sync(s.device)
        except Exception as exc:
            if device_failure(exc):
                raise  # the device's, not the candidate's: the server answers it as such
            run["error"] = _error_line(exc)
            runs.append(run)
            continue
        if len(cand_out) != len(base_out):
            run["error"] = f"launch() returned {len(cand_out)} tensors, the original {len(base_out)}"
            runs.append(run)
            continue
        reference = (lambda seed=seed: s.reference(seed)) if s.has_reference else None
        run["outputs"] = compare_outputs(base_out, cand_out, tolerances, reference, _error_line)
        runs.append(run)
    return runs


def op_model_check(args):
    """Gate 3 evidence: launch() of the candidate file vs the original's, float64 reference() where they differ."""
    s = get_session(args)
    cand = _load_cached(args["candidate_module"])
    if not callable(getattr(cand, "launch", None)):
        raise ProblemError(f"{args['candidate_module']}: defines no `launch()`")
    runs = _model_runs(s, cand, args["tolerances"])
    return {"runs": runs, "reference": s.has_reference}


def op_bench(args):
    """Interleaved samples of the baseline and each candidate: one kernel's launches, or launch()."""
    torch = _torch()
    s = get_session(args)
    seed = s.seeds[0]
    trials, warmup = args["trials"], args["warmup"]
    before = None
    if args["mode"] == "kernel":
        name = args["kernel"]
        sites = s.launches_of(seed, name)
        objs = {"baseline": s.objs[name]}
        for path in args["candidates"]:
            objs[path] = _kernel_obj(_load_cached(path), name, path)
        work = {key: [l.copy() for l in sites] for key in objs}

        def make(key):
            def run():
                for l in work[key]:
                    l.run(objs[key])
            return run

        def restore(key):
            for w, p in zip(work[key], sites):
                _restore(w, p)

        fns = {key: make(key) for key in objs}
        before = restore if args["restore"] else None
    else:
        inputs = s.inputs[seed]
        fns = {"baseline": lambda: s.mod.launch(*inputs)}
        for path in args["candidates"]:
            mod = _load_cached(path)
            fns[path] = (lambda m=mod: m.launch(*inputs))
    with torch.no_grad():
        return {"samples_ms": _interleaved(fns, trials=trials, warmup=warmup, before=before, device=s.device)}


def op_parse(args):
    """The static artifact of a standalone file (no launches: those are seen only when launch() runs)."""
    path = args["module_path"]
    source = _read(path)
    try:
        return parse_artifact(source)
    except SyntaxError as exc:
        raise ProblemError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None


def op_compile(args):
    """Load a candidate file and compile its kernels for the recorded arguments of their first launch
    (the session of the request's problem, else the one this worker holds); under the interpreter,
    which compiles nothing, run each once on a copy of those arguments instead."""
    path = args["module_path"]
    mod = _load_cached(path)
    names = args.get("kernels") or [k["name"] for k in parse_file(_read(path))["kernels"]]
    objs = {n: _kernel_obj(mod, n, path) for n in names}
    s = get_session(args) if args.get("problem") else next(iter(_SESSIONS.values()), None)
    if interpreting():
        # the interpreter compiles nothing: a kernel's errors (unknown tl functions, non-constexpr
        # shapes) show when it first runs, so run each once on a copy of its first launch's arguments
        if s is not None:
            torch = _torch()
            for n, obj in objs.items():
                first = next((l for l in s.launches[s.seeds[0]] if l.kernel == n), None)
                if first is not None:
                    with torch.no_grad():
                        first.copy().run(obj)
        return {"compiled": True}
    if s is not None:
        for n, obj in objs.items():
            first = next((l for l in s.launches[s.seeds[0]] if l.kernel == n), None)
            if first is not None and hasattr(obj, "warmup"):
                obj.warmup(*first.args, grid=first.grid, **first.kwargs)
    return {"compiled": True}


def op_final_check(args):
    """End to end on fresh seeds: the optimized file's launch() vs the original's and vs float64 reference()."""
    import json
    from kernelopt.gates.compare import compare_tensors, error_vs_reference, tolerance_for
    torch = _torch()
    run_dir = args["run_dir"]
    device = device_of(args)
    with open(os.path.join(run_dir, "manifest.json")) as f:
        manifest = json.load(f)
    orig_path = os.path.join(run_dir, manifest.get("problem") or "problem.py")
    orig = load_file(orig_path)
    opt, substituted = orig, 0
    for m in manifest.get("modules", []):
        if m.get("optimized"):
            opt = _load_cached(os.path.join(run_dir, m["optimized"]))
            substituted += 1
    has_ref = callable(getattr(orig, "reference", None))
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        from kernelopt.device.info import NoGpuError
        raise NoGpuError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False)")
    runs = []
    for seed in args["seeds"]:
        inputs = _inputs(orig, orig_path, seed, device)
        with torch.no_grad():
            o_out = flatten(opt.launch(*_call_inputs(inputs)))
            b_out = flatten(orig.launch(*_call_inputs(inputs)))
            if has_ref:
                ref = flatten(orig.reference(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                                               else x for x in _call_inputs(inputs)]))
            else:
                ref = b_out
        outs = []
        for i, (o, b, r) in enumerate(zip(o_out, b_out, ref)):
            a, rt = tolerance_for(o.dtype, args["tolerances"])
            ev = compare_tensors(o, r.to(o.dtype), a, rt)
            vs_base = compare_tensors(o, b, a, rt)
            outs.append({"index": i, "mismatches_vs_eager": ev["mismatches"] + ev["nan_mismatches"] + ev["inf_mismatches"],
                         "max_abs_err_vs_eager": ev["max_abs_err"],
                         "err_optimized": error_vs_reference(o, r), "err_baseline": error_vs_reference(b, r),
                         "mismatches_vs_baseline": vs_base["mismatches"] + vs_base["nan_mismatches"]
                         + vs_base["inf_mismatches"]})
        if len(o_out) != len(b_out):
            outs.append({"index": len(outs), "mismatches_vs_eager": 1, "max_abs_err_vs_eager": sys.float_info.max,
                         "err_optimized": sys.float_info.max, "err_baseline": 0.0,
                         "error": f"optimized launch() returned {len(o_out)} tensors, the original {len(b_out)}"})
        runs.append({"seed": seed, "outputs": outs})
    inputs = _inputs(orig, orig_path, args["seeds"][0], device)
    fns = {"baseline": lambda: orig.launch(*inputs), "optimized": lambda: opt.launch(*inputs)}
    if has_ref:
        fns["eager"] = lambda: orig.reference(*inputs)
    gpu_samples, trials = None, args["trials"]
    with torch.no_grad():
        samples = _interleaved(fns, trials=trials, warmup=3, device=device)
        if _on_gpu(device):  # under the interpreter there is no host time apart from the kernels' to hide
            from kernelopt.device import timing
            gpu_samples = timing.host_hidden(fns, trials=trials)
    if not has_ref:
        samples["eager"] = list(samples["baseline"])
        if gpu_samples:
            gpu_samples["eager"] = list(gpu_samples["baseline"])
    out = {"runs": runs, "substituted": substituted, "samples_ms": samples, "reference": has_ref}
    if gpu_samples:
        out["gpu_samples_ms"] = gpu_samples
    return out

