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
"""
import copy

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


def compile_model(model, settings):
    """torch.compile with the decision's settings (mode or Inductor options; the engine never sends both)."""
    kw = {}
    if settings.get("mode"):
        kw["mode"] = settings["mode"]
    if settings.get("options"):
        kw["options"] = dict(settings["options"])
    if settings.get("channels_last"):
        model = model.to(memory_format=torch.channels_last)  # in place: callers pass a model of its own
    return torch.compile(model, **kw)


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
        # channels_last: a converted copy (the loader's model stays as built: final_check's eager and
        # torch.compile default run on it, users see it unchanged)
        self.model = copy.deepcopy(model).to(memory_format=torch.channels_last) if self.channels_last else model
        self.fingerprint = weights_fingerprint(self.model) if self.freezing else None
        self.active = self.cudagraphs or self.freezing or self.channels_last

    def describe(self):
        parts = []
        if self.cudagraphs:
            parts.append("CUDA graphs: outputs cloned")
        if self.freezing:
            parts.append("freezing: weights changed after loading are refused")
        if self.channels_last:
            parts.append("channels_last inputs")
        return "; ".join(parts) or "settings only"

    def call(self, compiled, inputs):
        if self.freezing and weights_fingerprint(self.model) != self.fingerprint:
            raise WeightsChangedError("the run's model was frozen (--decisions kept freezing): its weights were "
                                      "compiled in as constants, and they changed after loading; load the run "
                                      "again (kernelopt.load) to compile the new weights")
        inputs = decision_inputs(inputs, self.settings)
        with torch.no_grad():
            out = compiled(*inputs)
        return _clone_outputs(out) if self.cudagraphs else out
