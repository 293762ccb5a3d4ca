"""Load a KernelBench-format problem file: `Model`, `get_inputs()`, `get_init_inputs()`.

Every failure becomes a ProblemError with one line a user can act on; the
engine prints it as is.
"""
import hashlib
import importlib.util
import os
import sys

INIT_SEED = 0  # weights are drawn once, from this seed, and saved with the run


class ProblemError(Exception):
    kind = "problem"


def file_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_problem(path):
    """The problem module at path, checked for the three names the format requires."""
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such file")
    name = "kernelopt_problem_" + file_hash(path)[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as exc:
        raise ProblemError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        raise ProblemError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, attr):
            raise ProblemError(f"{path}: defines no `{attr}` (KernelBench format needs Model, get_inputs, get_init_inputs)")
    sys.modules[name] = mod
    return mod


def build_model(problem, path, device):
    """The problem's model with weights drawn from INIT_SEED, on device, in eval mode."""
    import torch
    torch.manual_seed(INIT_SEED)
    try:
        init = list(problem.get_init_inputs())
        with torch.device(device):
            model = problem.Model(*init)
    except Exception as exc:
        raise ProblemError(f"{path}: building Model(*get_init_inputs()) raised {type(exc).__name__}: {exc}") from None
    return model.to(device).eval()


def make_inputs(problem, path, seed, device):
    """get_inputs() drawn from seed, created directly on the device (large inputs are slow on the CPU)."""
    import torch
    torch.manual_seed(seed)
    try:
        with torch.device(device):
            inputs = list(problem.get_inputs())
    except Exception as exc:
        raise ProblemError(f"{path}: get_inputs() raised {type(exc).__name__}: {exc}") from None
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
