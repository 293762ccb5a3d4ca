"""A captured model: its compiled output modules and the real arguments they see.

capture() compiles the problem's model with torch.compile (Inductor), keeps each
output module Inductor loads (intercepting PyCodeCache.load_by_key_path, the
one door both fresh compiles and cache hits go through), and wraps each module's
call() so that it can record its arguments. Sessions are cached in the worker
process keyed by their request, so a restarted worker rebuilds the same state
from the same request.

Memory: a session holds one seed's state on the device at a time (the active
seed): either the call() arguments of each module, or the recorded launches of
one kernel (launch-site arguments, recorded by replaying call() with a hook on
that kernel's run()), never every seed's. Moving to another seed, or to another
kernel, drops what was held and makes the new state again: the seed's inputs
are drawn again from the seed, on the device (problem.make_inputs), and the
compiled model run once on them. At 6-16 GB inputs this keeps a worker op's
peak to a few copies of the problem's working set (ARCHITECTURE.md, "Memory").
"""
import gc
import os

import torch

from kernelopt.device import kernels as K
from kernelopt.artifact.inductor import parse_module
from kernelopt.problem import build_model, describe, file_hash, flatten, load_problem, make_inputs, problem_work  # noqa: F401 (flatten: the ops use it from here)
from kernelopt.worker.failures import device_failure

_SESSIONS = {}


class CaptureError(Exception):
    kind = "capture"


class ModuleRecord:
    def __init__(self, index, path, source, mod):
        self.index, self.path, self.source, self.mod = index, path, source, mod
        self.call = mod.call  # the original call, before our recording wrapper
        self.artifact = parse_module(source)  # parsed once, kept for every op on this module
        self.kernel_names = [k["name"] for k in self.artifact["kernels"]]
        self.args = None          # the active seed's call() arguments (clones), when held
        self.launch_args = {}     # the active seed's launches of one kernel: {name: [launch args, ...]}

    def kernel(self, name):
        return getattr(self.mod, name)


def record_launches(mod, call, args, kernel_names):
    """{kernel: [args of each launch]}: call(args) replayed with a hook on each named kernel's run()
    that copies the arguments of each launch before it runs. call() consumes args (the caller's
    list and, for a graph that writes its inputs, the tensors' values): pass a list to be dropped."""
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
            call(args)
        synchronize()
    finally:
        for name, run in originals.items():
            getattr(mod, name).run = run
    return seen


def synchronize():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def release_memory():
    """Frees what nothing refers to any more, and the allocator's cached blocks: the next state is
    made in memory the last one held."""
    gc.collect()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


class Session:
    def __init__(self, problem_path, device, seeds, settings=None):
        self.settings = settings  # a kept whole-model decision's torch.compile settings; None = default
        self.problem_path = os.path.abspath(problem_path)
        self.problem = load_problem(self.problem_path)
        self.device = device
        self.seeds = list(seeds)
        self.model = build_model(self.problem, self.problem_path, device)
        self.modules = []
        self.output_meta = []   # [{"shape", "dtype"}] of the compiled model's outputs (first seed)
        self.active = None      # the seed whose state the modules hold
        self._compiled = None
        self._recording = False
        self._reference = {}    # the active seed's float64 eager outputs, once computed
        self._work = None

    def capture(self):
        from torch._inductor.codecache import PyCodeCache
        orig = PyCodeCache.load_by_key_path.__func__
        session = self

        def patched(cls, key, path, linemap=None, attrs=None, **kw):
            mod = orig(cls, key, path, linemap, attrs, **kw)
            if hasattr(mod, "call") and not any(m.mod is mod for m in session.modules):
                rec = ModuleRecord(len(session.modules), path, open(path).read(), mod)
                inner = mod.call

                def call(args, _rec=rec, _inner=inner):
                    if session._recording:
                        _rec.args = K.clone_args(args)
                    return _inner(args)

                mod.call = call
                session.modules.append(rec)
            return mod

        self._measure_work()
        torch._dynamo.reset()
        PyCodeCache.load_by_key_path = classmethod(patched)
        try:
            if self.settings is None:
                self._compiled = torch.compile(self.model)
            else:
                from kernelopt.runtime.decision import compile_model
                self._compiled = compile_model(self.model, self.settings)
            out = self._forward(self.seeds[0])
        finally:
            PyCodeCache.load_by_key_path = classmethod(orig)
        if not self.modules:
            raise CaptureError("torch.compile produced no Inductor output module (nothing to optimize)")
        self.output_meta = [{"shape": list(t.shape), "dtype": str(t.dtype)} for t in flatten(out)]
        del out
        self._check_recorded(self.seeds[0])
        self.active = self.seeds[0]
        release_memory()
        return self

    def _forward(self, seed):
        """The compiled model on the seed's inputs, each module's call() arguments recorded."""
        inputs = make_inputs(self.problem, self.problem_path, seed, self.device)
        if self.settings is not None:
            from kernelopt.runtime.decision import decision_inputs
            inputs = decision_inputs(inputs, self.settings)
        self._recording = True
        try:
            with torch.no_grad():
                return self._compiled(*inputs)
        except Exception as exc:
            if device_failure(exc):
                raise  # answered as the device's (out of memory: the engine retries on fewer seeds)
            raise CaptureError(f"torch.compile failed on {os.path.basename(self.problem_path)}: "
                               f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        finally:
            self._recording = False

    def _check_recorded(self, seed):
        missing = [rec.index for rec in self.modules if rec.args is None]
        if missing:
            raise CaptureError(f"seed {seed}: the compiled model did not call its output module(s) {missing} "
                               "(it compiled again for this seed's inputs: shapes or dtypes differ between seeds?)")

    def release(self):
        """Drops the active seed's state (call arguments, launches, reference) from the device."""
        for rec in self.modules:
            rec.args, rec.launch_args = None, {}
        self._reference = {}
        self.active = None
        release_memory()

    def activate(self, seed):
        """Makes seed the active seed, with every module's call() arguments held."""
        if self.active == seed and all(rec.args is not None for rec in self.modules):
            return
        self.release()
        self._forward(seed)
        self._check_recorded(seed)
        self.active = seed

    def call_args(self, module, seed):
        """Module `module`'s call() arguments for seed (call() empties the list it gets: pass a copy)."""
        self.activate(seed)
        return self.modules[module].args

    def launches(self, module, seed, kernel):
        """[args of each launch] of kernel in module `module` for seed, recorded by replaying call()
        on the seed's arguments. Held alone: the call arguments and other kernels' launches are
        dropped (the next call_args() makes them again)."""
        rec = self.modules[module]
        if self.active == seed and kernel in rec.launch_args:
            return rec.launch_args[kernel]
        self.activate(seed)
        args = rec.args
        for r in self.modules:
            r.args, r.launch_args = None, {}
        self._reference = {}
        recorded = record_launches(rec.mod, rec.call, args, [kernel])
        del args
        release_memory()
        rec.launch_args = {kernel: recorded.get(kernel, [])}
        return rec.launch_args[kernel]

    def _measure_work(self):
        """problem.problem_work on the first seed's inputs, before anything else is on the device (the
        working set is measured on an otherwise empty allocator). Only a report figure: a forward
        that fails here gives {"error": one line} instead of failing the capture."""
        try:
            inputs = make_inputs(self.problem, self.problem_path, self.seeds[0], self.device)
            self._work = problem_work(self.model, inputs)
        except Exception as exc:
            self._work = {"error": describe(exc)}
        release_memory()

    def work(self):
        """The problem's min_bytes, FLOPs and working set (problem.problem_work), measured at capture."""
        return self._work

    def reference(self, seed):
        """Float64 eager outputs for seed (model and inputs upcast), computed once per activation; the
        seed's call arguments and launches are dropped first, to make room for it."""
        if seed not in self._reference:
            import copy
            for rec in self.modules:
                rec.args, rec.launch_args = None, {}
            self._reference = {}
            release_memory()
            model64 = copy.deepcopy(self.model).double()
            ins = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                   for x in make_inputs(self.problem, self.problem_path, seed, self.device)]
            with torch.no_grad():
                out = flatten(model64(*ins))
            del model64, ins
            self.active = seed
            self._reference = {seed: out}
        return self._reference[seed]

    def held_bytes(self):
        """Bytes of the tensors the session holds beyond the model (call arguments, launches,
        reference), each storage once: what a test reads to see that one seed's state is held."""
        from kernelopt.problem import storage_bytes
        held = []
        for rec in self.modules:
            held += [a for a in rec.args or [] if isinstance(a, torch.Tensor)]
            held += [a for sites in rec.launch_args.values() for site in sites for a in site
                     if isinstance(a, torch.Tensor)]
        held += [t for out in self._reference.values() for t in out]
        return storage_bytes(held)


def get_session(problem_path, device, seeds, settings=None):
    import json
    key = (os.path.abspath(problem_path), file_hash(problem_path), device, tuple(seeds),
           json.dumps(settings, sort_keys=True))
    if key not in _SESSIONS:
        release_sessions()  # one model at a time: GPU memory is the limit, not compile time
        _SESSIONS[key] = Session(problem_path, device, seeds, settings).capture()
    return _SESSIONS[key]


def release_sessions():
    """Drops every cached session and frees its memory (final_check's models need the room)."""
    _SESSIONS.clear()
    release_memory()
