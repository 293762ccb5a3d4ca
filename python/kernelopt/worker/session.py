"""A captured model: its compiled output modules and the real arguments they see.

capture() compiles the problem's model with torch.compile (Inductor), keeps each
output module Inductor loads (intercepting PyCodeCache.load_by_key_path, the
one door both fresh compiles and cache hits go through), and records the
arguments of each module's call() for every seed. Launch-site arguments of the
Triton kernels are recorded by replaying call() with hooks on each kernel's
run(). Sessions are cached in the worker process keyed by their request, so a
restarted worker rebuilds the same state from the same request.
"""
import os

import torch

from kernelopt.worker import kernels as K
from kernelopt.worker.artifact import parse_module
from kernelopt.worker.problem import build_model, describe, file_hash, load_problem, make_inputs, problem_work

_SESSIONS = {}


class CaptureError(Exception):
    kind = "capture"


class ModuleRecord:
    def __init__(self, index, path, source, mod):
        self.index, self.path, self.source, self.mod = index, path, source, mod
        self.call = mod.call  # the original call, before our recording wrapper
        self.kernel_names = [k["name"] for k in parse_module(source)["kernels"]]  # parsed once
        self.args = {}        # seed -> list of call() arguments (clones)
        self._launches = {}   # seed -> {kernel name: [launch args, ...]}

    def kernel(self, name):
        return getattr(self.mod, name)

    def launches(self, seed):
        """{kernel: [args of each launch]} for seed, recorded by replaying call() with hooks."""
        if seed not in self._launches:
            self._launches[seed] = record_launches(self.mod, self.call, self.args[seed], self.kernel_names)
        return self._launches[seed]


def record_launches(mod, call, args, kernel_names):
    seen = {}
    originals = {}
    for name in kernel_names:
        obj = getattr(mod, name)
        originals[name] = obj.run

        def hooked(*a, _name=name, _run=obj.run, **kw):
            # whole storages, layout and aliasing kept: gate 2 compares the bytes outside each view
            seen.setdefault(_name, []).append(K.clone_args(a))
            return _run(*a, **kw)

        obj.run = hooked
    try:
        with torch.no_grad():
            call(K.clone_args(args))
        torch.cuda.synchronize()
    finally:
        for name, run in originals.items():
            getattr(mod, name).run = run
    return seen


class Session:
    def __init__(self, problem_path, device, seeds):
        self.problem_path = os.path.abspath(problem_path)
        self.problem = load_problem(self.problem_path)
        self.device = device
        self.seeds = list(seeds)
        self.model = build_model(self.problem, self.problem_path, device)
        self.modules = []
        self.outputs = {}  # seed -> compiled model outputs (flattened tensors)
        self.inputs = {}
        self._reference = {}
        self._work = None

    def capture(self):
        from torch._inductor.codecache import PyCodeCache
        orig = PyCodeCache.load_by_key_path.__func__
        session = self
        recording = {"seed": None}

        def patched(cls, key, path, linemap=None, attrs=None, **kw):
            mod = orig(cls, key, path, linemap, attrs, **kw)
            if hasattr(mod, "call") and not any(m.mod is mod for m in session.modules):
                rec = ModuleRecord(len(session.modules), path, open(path).read(), mod)
                inner = mod.call

                def call(args, _rec=rec, _inner=inner):
                    if recording["seed"] is not None:
                        _rec.args[recording["seed"]] = K.clone_args(args)
                    return _inner(args)

                mod.call = call
                session.modules.append(rec)
            return mod

        torch._dynamo.reset()
        PyCodeCache.load_by_key_path = classmethod(patched)
        try:
            compiled = torch.compile(self.model)
            for seed in self.seeds:
                inputs = make_inputs(self.problem, self.problem_path, seed, self.device)
                self.inputs[seed] = inputs
                recording["seed"] = seed
                try:
                    with torch.no_grad():
                        out = compiled(*inputs)
                except Exception as exc:
                    raise CaptureError(f"torch.compile failed on {os.path.basename(self.problem_path)}: "
                                       f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
                self.outputs[seed] = flatten(out)
        finally:
            recording["seed"] = None
            PyCodeCache.load_by_key_path = classmethod(orig)
        if not self.modules:
            raise CaptureError("torch.compile produced no Inductor output module (nothing to optimize)")
        return self

    def work(self):
        """The problem's min_bytes and FLOPs (problem.problem_work) on the first seed's inputs, on the
        session's device; computed once. Only a report figure: a forward that fails here (out of memory
        beside the captured state) gives {"error": one line} instead of failing the capture."""
        if self._work is None:
            try:
                self._work = problem_work(self.model, self.inputs[self.seeds[0]])
            except Exception as exc:
                self._work = {"error": describe(exc)}
        return self._work

    def reference(self, seed):
        """Float64 eager outputs for seed (model and inputs upcast), computed once."""
        if seed not in self._reference:
            import copy
            model64 = copy.deepcopy(self.model).double()
            ins = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                   for x in self.inputs[seed]]
            with torch.no_grad():
                self._reference[seed] = flatten(model64(*ins))
            del model64
        return self._reference[seed]


def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flatten(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flatten(v)]
    return []


def get_session(problem_path, device, seeds):
    key = (os.path.abspath(problem_path), file_hash(problem_path), device, tuple(seeds))
    if key not in _SESSIONS:
        _SESSIONS.clear()  # one model at a time: GPU memory is the limit, not compile time
        torch.cuda.empty_cache() if torch.cuda.is_available() else None
        _SESSIONS[key] = Session(problem_path, device, seeds).capture()
    return _SESSIONS[key]
