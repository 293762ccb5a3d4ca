"""Helion kernel files as input: `helion_export` turns one into a standalone Triton file.

The file convention (README.md, "Helion kernels"): one module-level `@helion.kernel`
function (or several, one of them named), `get_inputs()` and, optionally,
`reference(*inputs)` in PyTorch.

Helion's own API gives the Triton code of a configuration (`BoundKernel.to_triton_code`):
the `@triton.jit` kernel(s) plus a host function with the Helion kernel's call signature,
launching through Helion's launcher (which calls the jit function's `run`, as Triton's
`kernel[grid](...)` does, so the standalone capture records those launches). The export
appends the standalone convention around that code (launch, get_inputs, reference) and
checks that the exported file reproduces the Helion kernel's own output. From then on the
run is a standalone-Triton run of the exported file: same gates, same outputs; the optimized
file keeps the host function, so it is a drop-in for the Helion kernel's call.
"""
import importlib.util
import os
import sys
import uuid

from kernelopt.problem import ProblemError, describe

NOT_INSTALLED = "Helion is not installed in this Python ({exe}): pip install helion"

# Appended to Helion's generated code: the standalone-Triton convention (standalone.py), and the
# Helion kernel's name as a guarded entry point. Helion specializes its code to the shapes, strides
# and dtypes it was generated for; a call with other arguments goes to the Helion kernel itself
# (which compiles for them), never to code that was not generated for them.
ADAPTER = '''

# ---- kernelopt: the standalone-Triton convention around Helion's generated code ----
# From {source} (kernel `{kernel}`, Helion {version}, {config}).
# {host}() below is a drop-in for the Helion kernel: arguments like those the code was generated
# for ({specialized}) run the (optimized) code above; any others run the Helion kernel itself.
_KERNELOPT_HELION_FILE = {source!r}
_KERNELOPT_SPECIALIZED = {guard!r}
_kernelopt_helion_module = None
_kernelopt_generated = {host}


def _kernelopt_helion():
    global _kernelopt_helion_module
    if _kernelopt_helion_module is None:
        import importlib.util as _util
        import sys as _sys
        _spec = _util.spec_from_file_location("kernelopt_helion_" + str(abs(hash(_KERNELOPT_HELION_FILE))),
                                              _KERNELOPT_HELION_FILE)
        _kernelopt_helion_module = _util.module_from_spec(_spec)
        _sys.modules[_spec.name] = _kernelopt_helion_module
        _spec.loader.exec_module(_kernelopt_helion_module)
    return _kernelopt_helion_module


def _kernelopt_signature(value):
    if isinstance(value, torch.Tensor):
        return ["tensor", list(value.shape), list(value.stride()), str(value.dtype), value.device.type]
    return ["value", repr(value)]


def {host}({params}):
    args = ({forward})
    if [_kernelopt_signature(a) for a in args] == _KERNELOPT_SPECIALIZED:
        return _kernelopt_generated(*args)
    return _kernelopt_helion().{kernel}(*args)


def launch(*inputs):
    return _kernelopt_generated(*inputs)


def get_inputs():
    return _kernelopt_helion().get_inputs()
'''

REFERENCE = '''

def reference(*inputs):
    return _kernelopt_helion().reference(*inputs)
'''


def _signature(value):
    """What the guard compares; the same as the adapter's _kernelopt_signature."""
    import torch
    if isinstance(value, torch.Tensor):
        return ["tensor", list(value.shape), list(value.stride()), str(value.dtype), value.device.type]
    return ["value", repr(value)]


def _params(kernel, path, name):
    """The Helion function's positional parameters (the generated host function takes them in order)."""
    import inspect
    params = list(inspect.signature(kernel.fn).parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty for p in params):
        raise ProblemError(f"{path}: {name} has keyword-only, variadic or default parameters; "
                           "optimize-helion handles kernels whose parameters are all positional")
    return [p.name for p in params]


def _helion():
    try:
        import helion
        from helion.runtime.kernel import Kernel
    except ModuleNotFoundError as exc:
        if exc.name == "helion":
            raise ProblemError(NOT_INSTALLED.format(exe=sys.executable)) from None
        raise ProblemError(f"Helion does not import in {sys.executable}: {describe(exc)} (a missing dependency)") from None
    except Exception as exc:  # installed, but not for this torch/triton
        raise ProblemError(f"Helion does not import in {sys.executable}: {describe(exc)} "
                           "(is it a release for this torch and triton?)") from None
    return helion, Kernel


def _load_user_file(path):
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such file")
    name = f"kernelopt_helion_src_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ProblemError(f"{path}: importing it raised {describe(exc)}") from None
    return mod


def _pick_kernel(mod, path, wanted, Kernel):
    kernels = {n: v for n, v in vars(mod).items() if isinstance(v, Kernel)}
    if not kernels:
        raise ProblemError(f"{path}: defines no @helion.kernel function")
    if wanted:
        if wanted not in kernels:
            raise ProblemError(f"{path}: no @helion.kernel named {wanted} (it has {', '.join(sorted(kernels))})")
        return wanted, kernels[wanted]
    if len(kernels) > 1:
        raise ProblemError(f"{path}: defines {len(kernels)} Helion kernels ({', '.join(sorted(kernels))}); "
                           "name one with --helion-kernel")
    return next(iter(kernels.items()))


def _choose_config(kernel, bound, inputs, autotune):
    """The config whose code is optimized: the kernel's own (one given, or Helion's autotune among
    several / over its whole space with --helion-autotune), else Helion's default config."""
    configs = list(getattr(kernel, "configs", []) or [])
    if autotune or len(configs) > 1:
        if os.environ.get("TRITON_INTERPRET") == "1":
            if configs:
                return configs[0], "the first of the kernel's configs (no autotuning under the interpreter)"
            return bound.config_spec.default_config(), "Helion's default config (no autotuning under the interpreter)"
        return bound.autotune(list(inputs)), "chosen by Helion's autotuner"
    if configs:
        return configs[0], "the kernel's config"
    return bound.config_spec.default_config(), "Helion's default config (pass --helion-autotune to autotune)"


def op_helion_export(args):
    """Writes args["out"]: Helion's Triton code for the chosen config plus the standalone convention."""
    import torch
    from kernelopt.gates.compare import compare_tensors, tolerance_for
    from kernelopt.inputs.module.session import flatten
    from kernelopt.inputs.triton.session import device_of, interpreter_libdevice, load_file

    helion, Kernel = _helion()
    interpreter_libdevice()
    path = os.path.abspath(args["problem"])
    mod = _load_user_file(path)
    name, kernel = _pick_kernel(mod, path, args.get("kernel"), Kernel)
    if not callable(getattr(mod, "get_inputs", None)):
        raise ProblemError(f"{path}: defines no get_inputs() (the Helion kernel's inputs)")
    device = device_of(args)
    torch.manual_seed(args["seed"])
    try:
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    except Exception as exc:
        raise ProblemError(f"{path}: get_inputs() raised {describe(exc)}") from None
    try:
        bound = kernel.bind(tuple(inputs))
        config, how = _choose_config(kernel, bound, inputs, args["autotune"])
        code = bound.to_triton_code(config)
    except ProblemError:
        raise
    except Exception as exc:
        raise ProblemError(f"{path}: Helion could not generate code for {name}: {describe(exc)}") from None
    host = kernel.fn.__name__
    params = _params(kernel, path, name)
    if len(params) != len(inputs):
        raise ProblemError(f"{path}: get_inputs() gives {len(inputs)} inputs, {name} takes {len(params)}")
    guard = [_signature(x) for x in inputs]
    text = code.rstrip("\n") + "\n" + ADAPTER.format(
        source=path, kernel=name, version=_version(helion), config=f"{how}: {config!r}".replace("\n", " "),
        host=host, params=", ".join(params), forward="".join(p + ", " for p in params),
        specialized="; ".join(f"{p}: {' '.join(map(str, g[1:]))}" for p, g in zip(params, guard)), guard=guard)
    if callable(getattr(mod, "reference", None)):
        text += REFERENCE
    out = args["out"]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)

    # The exported file must compute what the Helion kernel computes: else the run would
    # optimize something other than the user's kernel.
    exported = load_file(out)
    with torch.no_grad():
        expected = flatten(kernel(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
        got = flatten(exported.launch(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
    if len(got) != len(expected):
        raise ProblemError(f"{path}: the exported code returns {len(got)} tensors, Helion's kernel {len(expected)}")
    worst = 0.0
    for g, e in zip(got, expected):
        a, r = tolerance_for(e.dtype, args["tolerances"])
        ev = compare_tensors(g, e, a, r)
        if ev["mismatches"] + ev["nan_mismatches"] + ev["inf_mismatches"] or ev.get("error"):
            raise ProblemError(f"{path}: the exported Triton code does not reproduce {name}'s output "
                               f"(max abs err {ev['max_abs_err']})")
        worst = max(worst, float(ev["max_abs_err"] or 0.0))
    return {"path": out, "kernel": name, "host_function": host, "config": repr(config), "config_source": how,
            "helion": _version(helion), "reference": callable(getattr(mod, "reference", None)),
            "max_abs_err_vs_helion": worst}


def _version(helion):
    try:
        from importlib.metadata import version
        return version("helion")
    except Exception:
        return getattr(helion, "__version__", "unknown")
