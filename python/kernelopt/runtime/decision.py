"""What the loader adds for a kept whole-model decision (manifest.json's "decision", `--decisions`).

- CUDA graphs (mode reduce-overhead or max-autotune, or a composition's option triton.cudagraphs): a graph
  replay writes its outputs into the same static buffers every call, so a caller that keeps the outputs of
  one call would see them overwritten by the next. The loader clones every output tensor (tests/gpu/test_decisions_gpu.py shows the overwrite
  without the clone and none with it).
- freezing: Inductor folds the weights into constants at the first call; weights changed afterwards
  would be silently ignored. The loader records a fingerprint of the parameters and buffers (each
  tensor's identity, address and version counter, which every in-place write bumps) and refuses a call
  after they changed, with the fix in the message (load the run again).
- channels_last: the model and 4-D inputs in channels_last memory format, as the decision was measured.
- cudnn_benchmark: every call on the process's autotuning thread (cuDNN keeps its plans per thread) with
  `torch.backends.cudnn.benchmark` on around it (restored after it): cuDNN times its algorithms for each
  convolution shape at the first call there and keeps the fastest. The vendor calls are the same; which
  algorithm runs is cuDNN's choice in each process, so a loaded run may pick another one than the run measured
  (each within the gates' tolerances there). The handoff to the thread costs host time each
  call, in the decision's timing and the end-to-end one.
"""
import contextlib
import copy
import threading

import torch

CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")


def uses_cudagraphs(settings):
    settings = settings or {}
    return settings.get("mode") in CUDAGRAPH_MODES or bool((settings.get("options") or {}).get("triton.cudagraphs"))


def decision_inputs(inputs, settings):
    """The inputs as the decision runs them (channels_last: 4-D tensor inputs converted, others as given). The
    model's own conversion is compile_model's, on the model it compiles: the caller's model is never converted."""
    if not settings.get("channels_last"):
        return inputs
    return [x.contiguous(memory_format=torch.channels_last) if isinstance(x, torch.Tensor) and x.dim() == 4
            else x for x in inputs]


class CudnnBenchmarked:
    """A compiled model whose calls all run on the process's autotuning thread (on_autotuning_thread): each
    convolution shape's first call there times cuDNN's algorithms and keeps the fastest, whatever ran in the
    caller's thread before.

    A process that has the flag on already when this is made (a user who autotunes sets it before the first
    convolution) runs its calls on the caller's thread: its plans are autotuned there, and the handoff (host
    time every call: level3/12's host time went from 0.14 to 0.49 ms a call on an H100 host) is saved. Plans
    that thread found before the flag was set stay heuristics' (slower, not wrong)."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.on_callers_thread = bool(torch.backends.cudnn.benchmark)

    def __call__(self, *args, **kwargs):
        if self.on_callers_thread:
            return self.compiled(*args, **kwargs)
        return on_autotuning_thread(lambda: self.compiled(*args, **kwargs))


_AUTOTUNING = None  # the process's one thread with cuDNN's autotuning on (on_autotuning_thread)


@contextlib.contextmanager
def _cudnn_autotuning():
    """torch.backends.cudnn.benchmark on, and as it was after (the flag is the process's: another thread's
    convolution running its first call meanwhile would see it on)."""
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = before


def on_autotuning_thread(fn):
    """fn() on the process's one autotuning thread (runtime/own_thread: the caller's grad mode, inference mode
    and CUDA stream go with it), with cuDNN's autotuning on around it: cuDNN's plans are per thread, found at a
    convolution shape's first call there, so every convolution there runs an autotuned plan. The decision's
    calls run here (CudnnBenchmarked), and so do the kernel search's ops on a session whose kept decision it
    is (inputs/module/ops.py), so that the modules it profiles and times run the decision's plans (on the
    caller's thread they ran heuristics': level3/12's module measured 3.23 ms where the decided model's GPU
    time was 1.56 ms, diluting every kernel's share and model-level gain)."""
    global _AUTOTUNING
    from kernelopt.runtime.own_thread import OwnThread
    if _AUTOTUNING is None:
        _AUTOTUNING = OwnThread("kernelopt-cudnn-autotuning")
    if threading.current_thread() is _AUTOTUNING.thread:
        return fn()  # already there (an op calling the decided model): handing it over would wait on itself

    def autotuned():
        with _cudnn_autotuning():
            return fn()
    return _AUTOTUNING.call(autotuned)


def compile_model(model, settings):
    """torch.compile with the decision's settings (mode or Inductor options; the engine never sends both),
    called with cuDNN's autotuning on where the decision has it."""
    kw = {}
    if settings.get("mode"):
        kw["mode"] = settings["mode"]
    if settings.get("options"):
        kw["options"] = dict(settings["options"])
    if settings.get("channels_last"):
        model = model.to(memory_format=torch.channels_last)  # in place: callers pass a model of its own
    compiled = torch.compile(model, **kw)
    return CudnnBenchmarked(compiled) if settings.get("cudnn_benchmark") else compiled


def call_as_loaded(compiled, inputs, settings):
    """One call of the decision's compiled model as the loader makes it (DecisionGuard.call, less its freezing
    check): channels_last's conversion of the inputs, no grad, CUDA graphs' clone of the outputs. The decision
    gate times this, so that what it measures is what a loaded run costs (measured apart, the conversion
    made channels_last look 1.107x where the run end to end was 0.872x: bench/results/2026-12-08-*)."""
    inputs = decision_inputs(inputs, settings)
    with torch.no_grad():
        out = compiled(*inputs)
    return _clone_outputs(out) if uses_cudagraphs(settings) else out


class WeightsChangedError(RuntimeError):
    pass


def weights_fingerprint(model):
    return tuple((id(t), t.data_ptr(), t._version) for t in list(model.parameters()) + list(model.buffers()))


def _clone_outputs(out):
    return torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, out)


class DecisionGuard:
    def __init__(self, model, settings):
        self.settings = settings or {}
        self.cudagraphs = uses_cudagraphs(self.settings)
        self.freezing = bool((self.settings.get("options") or {}).get("freezing"))
        self.channels_last = bool(self.settings.get("channels_last"))
        self.cudnn_benchmark = bool(self.settings.get("cudnn_benchmark"))
        # channels_last: a converted copy (the loader's model stays as built: final_check's eager and
        # torch.compile default run on it, users see it unchanged)
        self.model = copy.deepcopy(model).to(memory_format=torch.channels_last) if self.channels_last else model
        self.fingerprint = weights_fingerprint(self.model) if self.freezing else None
        self.active = self.cudagraphs or self.freezing or self.channels_last or self.cudnn_benchmark

    def describe(self):
        parts = []
        if self.cudagraphs:
            parts.append("CUDA graphs: outputs cloned")
        if self.freezing:
            parts.append("freezing: weights changed after loading are refused")
        if self.channels_last:
            parts.append("channels_last inputs")
        if self.cudnn_benchmark:
            parts.append("cuDNN autotuning, each call on a thread of its own")
        return "; ".join(parts) or "settings only"

    def call(self, compiled, inputs):
        if self.freezing and weights_fingerprint(self.model) != self.fingerprint:
            raise WeightsChangedError("the run's model was frozen (--decisions kept freezing): its weights were "
                                      "compiled in as constants, and they changed after loading; load the run "
                                      "again (kernelopt.load) to compile the new weights")
        return call_as_loaded(compiled, inputs, self.settings)
