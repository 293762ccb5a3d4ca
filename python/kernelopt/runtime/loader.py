"""Run the optimized model of a finished run: Inductor compiles as usual, kernelopt swaps modules.

A run directory holds the problem file, its weights, the baseline output
modules Inductor produced, the optimized ones, and manifest.json mapping one
to the other. `load_run` compiles the model with torch.compile through a
backend that intercepts Inductor's module loading (PyCodeCache.load_by_key_path):
when Inductor produces a module identical to a recorded baseline (up to its
per-process AOT counter line), the optimized module is loaded in its place.
Anything else (new shapes, another torch version) stays as Inductor made it,
so guards and recompilation behave exactly as with plain torch.compile.
"""
import contextlib
import hashlib
import json
import os
import re

_AOT_LINE = re.compile(r"^# AOT ID:.*\n", re.M)


def normalized_hash(source):
    """Hash of an output module, ignoring the AOT counter line Inductor bumps per compile."""
    return hashlib.sha256(_AOT_LINE.sub("", source, count=1).encode("utf-8")).hexdigest()


@contextlib.contextmanager
def substitutions(mapping, counter):
    """While active, Inductor modules whose normalized hash is in mapping load from mapping[hash]."""
    from torch._inductor.codecache import PyCodeCache
    orig = PyCodeCache.load_by_key_path.__func__

    def patched(cls, key, path, linemap=None, attrs=None, **kw):
        try:
            with open(path) as f:
                h = normalized_hash(f.read())
        except OSError:
            h = None
        if h in mapping:
            counter.append(h)
            return orig(cls, key + "_kernelopt", mapping[h], linemap, attrs, **kw)
        return orig(cls, key, path, linemap, attrs, **kw)

    PyCodeCache.load_by_key_path = classmethod(patched)
    try:
        yield
    finally:
        PyCodeCache.load_by_key_path = classmethod(orig)


def decision_config(settings):
    """Inductor's config patches for a kept whole-model decision's settings (torch.compile's mode and
    options, as torch.compile itself turns them into config); {} for none."""
    import torch
    patches = {}
    if settings and settings.get("mode"):
        patches.update(torch._inductor.list_mode_options(settings["mode"]))
    if settings and settings.get("options"):
        patches.update(settings["options"])
    return patches


def backend(mapping, counter, config_patches=None):
    """A torch.compile backend: Inductor (with a kept decision's config patches), with the given module
    substitutions."""
    from torch._inductor.compile_fx import compile_fx

    def compile_with_substitutions(gm, example_inputs):
        with substitutions(mapping, counter):
            compiled = compile_fx(gm, example_inputs, config_patches=config_patches or None)

        return compiled

    return compile_with_substitutions


class LoadedRun:
    """The optimized model: call it with the model's inputs."""

    def __init__(self, run_dir, device):
        import torch
        from kernelopt.problem import build_model, load_problem
        manifest_path = os.path.join(run_dir, "manifest.json")
        if not os.path.isfile(manifest_path):
            raise FileNotFoundError(f"{run_dir}: no manifest.json (not a finished kernelopt run)")
        with open(manifest_path) as f:
            self.manifest = json.load(f)
        self.problem_path = os.path.join(run_dir, "problem.py")
        self.problem = load_problem(self.problem_path)
        self.model = build_model(self.problem, self.problem_path, device)
        state = torch.load(os.path.join(run_dir, "weights.pt"), map_location=device)
        self.model.load_state_dict(state)
        self.mapping = {}
        for m in self.manifest["modules"]:
            if m.get("optimized"):
                with open(os.path.join(run_dir, m["baseline"])) as f:
                    self.mapping[normalized_hash(f.read())] = os.path.abspath(os.path.join(run_dir, m["optimized"]))
        self._hits = []
        # the kept whole-model decision (--decisions), reproduced: its settings, the outputs of a CUDA graph
        # cloned (the next replay overwrites them), and a frozen model's weights guarded
        self.decision = (self.manifest.get("decision") or {}).get("kept", "default")
        self.settings = (self.manifest.get("decision") or {}).get("settings") or {}
        from kernelopt.runtime.decision import DecisionGuard
        self._guard = DecisionGuard(self.model, self.settings)
        torch._dynamo.reset()
        self.compiled = torch.compile(self._guard.model,
                                      backend=backend(self.mapping, self._hits, decision_config(self.settings)))
        if self._guard.cudnn_benchmark:  # its calls on the autotuning thread, where cuDNN's plans are autotuned
            from kernelopt.runtime.decision import CudnnBenchmarked
            self.compiled = CudnnBenchmarked(self.compiled)
        self._grad_enabled, self._no_grad = torch.is_grad_enabled, torch.no_grad
        if self.decision != "default":
            import logging
            logging.getLogger("kernelopt").warning("kernelopt: %s reproduces the whole-model decision %s (%s)",
                                                   run_dir, self.decision, self._guard.describe())

    def substituted(self):
        """How many Inductor modules were replaced by optimized ones so far."""
        return len(self._hits)

    def __call__(self, *inputs):
        # no_grad only where grad is on: entering it costs host time on every call, which the
        # end-to-end timing counts, and the bench already calls under no_grad like the baseline
        if self._guard.active:
            return self._guard.call(self.compiled, inputs)
        if self._grad_enabled():
            with self._no_grad():
                return self.compiled(*inputs)
        return self.compiled(*inputs)


def load_run(run_dir, device="cuda"):
    return LoadedRun(run_dir, device)


def load(run_dir, device="cuda"):
    return load_run(run_dir, device)
