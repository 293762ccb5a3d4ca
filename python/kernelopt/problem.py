"""Load a KernelBench-format problem file: `Model`, `get_inputs()`, `get_init_inputs()`.

Every failure becomes a ProblemError with one line a user can act on; the
engine prints it as is.
"""
import hashlib
import importlib.util
import os
import sys

INIT_SEED = 0  # weights are drawn once, from this seed, and saved with the run
REQUIRED = ("Model", "get_inputs", "get_init_inputs")


class ProblemError(Exception):
    kind = "problem"


def describe(exc):
    """`Type: first line of the message`: one line, whatever the exception's message holds."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    if len(lines) > 1:
        text += " [...]"
    return text[:500]


def file_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_problem(path):
    """The problem module at path, checked for the three names the format requires."""
    if os.path.isdir(path):
        raise ProblemError(f"{path}: is a directory, not a model file")
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such file")
    name = "kernelopt_problem_" + file_hash(path)[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # as an import does: dataclasses, pickle and inspect look the module up by name
    try:
        try:
            spec.loader.exec_module(mod)
        except SyntaxError as exc:  # may be in a file the problem imports: name that file
            where = exc.filename if exc.filename and exc.filename != "<string>" else path
            line = f":{exc.lineno}" if exc.lineno else ""
            raise ProblemError(f"{where}{line}: syntax error: {exc.msg}") from None
        except (Exception, SystemExit) as exc:
            raise ProblemError(f"{path}: importing it raised {describe(exc)}") from None
        for attr in REQUIRED:
            if not hasattr(mod, attr):
                raise ProblemError(f"{path}: defines no `{attr}` "
                                   "(KernelBench format needs Model, get_inputs, get_init_inputs)")
            if not callable(getattr(mod, attr)):
                raise ProblemError(f"{path}: `{attr}` is not callable "
                                   "(KernelBench format: class Model, def get_inputs(), def get_init_inputs())")
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def build_model(problem, path, device):
    """The problem's model with weights drawn from INIT_SEED, on device, in eval mode."""
    import torch
    torch.manual_seed(INIT_SEED)
    try:
        init = list(problem.get_init_inputs())
    except Exception as exc:
        raise ProblemError(f"{path}: get_init_inputs() raised {describe(exc)}") from None
    try:
        with torch.device(device):
            model = problem.Model(*init)
    except Exception as exc:
        raise ProblemError(f"{path}: building Model(*get_init_inputs()) raised {describe(exc)}") from None
    if not isinstance(model, torch.nn.Module):
        raise ProblemError(f"{path}: Model(*get_init_inputs()) is a {type(model).__name__}, not a torch.nn.Module")
    return model.to(device).eval()


def make_inputs(problem, path, seed, device, draw_on=None, inputs_of="the forward's"):
    """get_inputs() drawn from seed under torch.device(draw_on) (default: the device itself, since large
    inputs are slow to draw on the CPU), tensors then moved to device. A standalone Triton file's
    inputs are drawn on the CPU (its convention): draw_on="cpu", inputs_of="launch()'s"."""
    import torch
    torch.manual_seed(seed)
    try:
        with torch.device(draw_on or device):
            inputs = problem.get_inputs()
    except Exception as exc:
        raise ProblemError(f"{path}: get_inputs() raised {describe(exc)}") from None
    if not isinstance(inputs, (list, tuple)):
        raise ProblemError(f"{path}: get_inputs() returned a {type(inputs).__name__}, not a list of {inputs_of} inputs")
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


def check_problem(problem, path, seed=0):
    """Builds the model and draws one seed's inputs without a GPU, so that a broken problem
    file is reported as such wherever it is checked. Tries the meta device first (no memory,
    no time); meta tensors hold no data, so whatever fails there is re-run on the CPU, and
    only an error the CPU confirms is reported."""
    try:
        build_model(problem, path, "meta")
        make_inputs(problem, path, seed, "meta")
    except ProblemError:
        build_model(problem, path, "cpu")
        make_inputs(problem, path, seed, "cpu")


FLOP_COUNTER = ("torch.utils.flop_counter.FlopCounterMode over one eager forward: matmuls, convolutions and "
                "attention; pointwise ops, reductions and normalizations are not counted")


def flatten(obj):
    """The tensors in a forward's output (tensors, lists, tuples, dicts), in order."""
    import torch
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in flatten(o)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in flatten(v)]
    return []


def storage_bytes(tensors):
    """Bytes of the storages `tensors` live in, each storage counted once: per storage, the span from
    the lowest to the highest byte its tensors reach (a tensor that is a view of another adds nothing;
    an expanded tensor counts its stored elements only)."""
    spans = {}  # (device, storage address) -> [first byte, end byte]
    for t in tensors:
        if t.numel() == 0:
            continue
        storage = t.untyped_storage()
        extent = 1 + sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride()))
        start = t.storage_offset() * t.element_size()
        end = start + extent * t.element_size()
        key = (str(t.device), storage.data_ptr())
        if key in spans:
            spans[key][0] = min(spans[key][0], start)
            spans[key][1] = max(spans[key][1], end)
        else:
            spans[key] = [start, end]
    return sum(end - start for start, end in spans.values())


def problem_work(model, inputs):
    """The problem's minimum work, for the end-to-end roofline: min_bytes = the bytes of the forward's
    inputs, the model's parameters and buffers and the outputs, each storage counted once (what any
    implementation reads and writes at least once); flops = FLOPs of one eager forward counted by
    FlopCounterMode (FLOP_COUNTER says what it counts). Runs the forward once, without grad, on
    clones of the inputs (a forward that writes its inputs leaves the caller's unchanged), on the
    device the model and inputs are on."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    state = [x for x in args if isinstance(x, torch.Tensor)] + list(model.parameters()) + list(model.buffers())
    counter = FlopCounterMode(display=False)
    cuda = any(isinstance(x, torch.Tensor) and x.is_cuda for x in state)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    with torch.no_grad(), counter:
        out = model(*args)
    min_bytes, input_bytes = storage_bytes(state + flatten(out)), storage_bytes(state)
    # the working set of one eager forward: inputs, parameters and buffers, plus the most the forward
    # allocated beyond them at once (outputs and intermediates); on the CPU, inputs + outputs only
    working_set = input_bytes + (torch.cuda.max_memory_allocated() - before if cuda else min_bytes - input_bytes)
    return {"min_bytes": min_bytes, "input_bytes": input_bytes, "working_set_bytes": int(working_set),
            "working_set_method": "inputs, parameters and buffers + eager forward's peak allocation (CUDA)" if cuda
            else "inputs, parameters, buffers and outputs (no device allocator to ask)",
            "flops": int(counter.get_total_flops()),
            "flop_counter": FLOP_COUNTER}
