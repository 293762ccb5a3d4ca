"""A standalone Triton kernel file as input (`"input_kind": "triton"` on every op): loaded, its launches captured.

The file convention (README.md, "Standalone Triton kernels"):

  - one or more module-level `@triton.jit` kernels, each optionally wrapped in
    `@triton.autotune(...)` / `@triton.heuristics(...)`;
  - `launch(*inputs)`: the launcher; takes the inputs, launches the kernels as
    `kernel[grid](...)` (grid a tuple or a callable of the meta-parameters) and returns a
    tensor or a tuple of tensors;
  - `get_inputs()`: the list of launch()'s inputs, created on the CPU (as KernelBench
    problems do) or on any device; the worker draws them after torch.manual_seed(seed)
    and moves tensors to the target device;
  - optionally `reference(*inputs)`: PyTorch computing the same result; gate 3 and the
    end-to-end check compare against it in float64 (inputs upcast).

The file itself is the "module" of the nn.Module path: capture copies it to
out_dir/baseline/module0.py (and out_dir/problem.py) and describes each @triton.jit
function as a kernel with byte spans into the file; a candidate is a full copy of the
file with one kernel's span replaced. Capture records every launch launch() makes, for
each seed: the launcher's module-global kernel objects get a recording `run` (what
`kernel[grid](...)` calls), which stores clones of the arguments before the launch
(layout and aliasing kept: each argument's whole storage is copied), the grid object
and the keyword arguments, then launches for real. The ops answer with exactly the
shapes of their nn.Module counterparts in ops.py, so the engine reads them alike.
"""
import hashlib
import os
import sys
import types
import uuid

from kernelopt.artifact.triton_file import CONVENTION, _artifact, parse_file
from kernelopt.problem import ProblemError, describe, file_hash, flatten, make_inputs
from kernelopt.worker.failures import device_failure

_SESSIONS = {}
_MODULES = {}


def _torch():
    import torch
    return torch


def interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def device_of(args):
    """The device tensors live on: the CPU under Triton's interpreter, else the requested one."""
    return "cpu" if interpreting() else args["device"]


def _on_gpu(device):
    torch = _torch()
    return str(device).startswith("cuda") and torch.cuda.is_available() and not interpreting()


def _sync(device):
    if _on_gpu(device):
        _torch().cuda.synchronize()


# ---------------------------------------------------------------------------------------------
# Loading files as modules.

def interpreter_libdevice():
    """Under TRITON_INTERPRET=1, `libdevice.*` (Inductor's and Helion's generated code import it from
    torch._inductor.runtime.triton_compat) returns None; triton.language.math has the same functions."""
    if not interpreting():
        return
    import triton.language as tl
    from torch._inductor.runtime import triton_compat
    triton_compat.libdevice = tl.math


def _read(path):
    if os.path.isdir(path):
        raise ProblemError(f"{path}: is a directory, not a Triton kernel file")
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such file")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProblemError(f"{path}: not a UTF-8 text file") from None


def load_file(path, source=None):
    """Import a standalone file (original or candidate) as a fresh module under a unique name.

    Its code is compiled under a file name unique to its content and registered in
    linecache, since Triton reads each kernel's source back through linecache (inspect):
    a file rewritten at the same path, or two candidates, never see each other's text.
    """
    import linecache
    interpreter_libdevice()
    path = os.path.abspath(path)
    if source is None:
        source = _read(path)
    tag = hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    filename = f"<kernelopt {path} {tag}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    name = f"kernelopt_triton_{tag}_{uuid.uuid4().hex[:8]}"
    mod = types.ModuleType(name)
    mod.__file__ = path
    mod.__kernelopt_filename__ = filename
    sys.modules[name] = mod
    try:
        exec(compile(source, filename, "exec"), mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _load_cached(path):
    """A candidate (or optimized) file's module, loaded once per content."""
    path = os.path.abspath(path)
    source = _read(path)
    key = (path, hashlib.sha256(source.encode("utf-8")).hexdigest())
    if key not in _MODULES:
        if len(_MODULES) > 64:
            _MODULES.clear()
        _MODULES[key] = load_file(path, source)
    return _MODULES[key]


def _kernel_obj(mod, name, path):
    obj = getattr(mod, name, None)
    if obj is None or not hasattr(obj, "run"):
        raise ProblemError(f"{path}: defines no @triton.jit kernel `{name}`")
    return obj


def _arg_names(obj):
    while obj is not None:
        names = getattr(obj, "arg_names", None)
        if names:
            return list(names)
        obj = getattr(obj, "fn", None)
    return []


# ---------------------------------------------------------------------------------------------
# Launch arguments: copies that keep layout and aliasing.

def _checks():
    from kernelopt.gates import launches as gate_checks  # imports torch: not at this module's import (op_parse needs none)
    return gate_checks


def _clone_values(args, kwargs, memo=None):
    return _checks().clone_values(args, kwargs, memo)


def _tensors(args, kwargs, names):
    return _checks().tensors(args, kwargs, names)


def _restore(dst, src):
    """Copies src's storages into dst's (a launch's working copy back to its recorded state)."""
    torch = _torch()
    seen = set()
    for d, s in zip(list(dst.args) + list(dst.kwargs.values()), list(src.args) + list(src.kwargs.values())):
        if isinstance(d, torch.Tensor):
            st = d.untyped_storage()
            if st.data_ptr() not in seen:
                seen.add(st.data_ptr())
                _checks().restore_storage(st, s.untyped_storage())


class Launch:
    """One recorded `kernel[grid](*args, **kwargs)`: arguments as they were before the launch."""

    def __init__(self, kernel, site, args, kwargs, grid):
        self.kernel, self.site, self.args, self.kwargs, self.grid = kernel, site, args, kwargs, grid

    def copy(self):
        args, kwargs = _clone_values(self.args, self.kwargs)
        return Launch(self.kernel, self.site, args, kwargs, self.grid)

    def run(self, obj):
        return obj[self.grid](*self.args, **self.kwargs)

    def nbytes(self):
        """Bytes of the tensor arguments, each storage once: the read+write estimate."""
        seen, total = set(), 0
        for _, _, t in _tensors(self.args, self.kwargs, []):
            key = t.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                total += t.numel() * t.element_size()
        return total


def _signature_of(launch, names, constexprs=()):
    torch = _torch()
    dt = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int64": "i64",
          "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "i1"}
    sig = {}
    values = dict(zip(names, launch.args))
    values.update({k: v for k, v in launch.kwargs.items() if k in names})
    for name, v in values.items():
        if name in constexprs:
            sig[name] = "constexpr"
        elif isinstance(v, torch.Tensor):
            d = str(v.dtype).replace("torch.", "")
            sig[name] = "*" + dt.get(d, d)
        elif isinstance(v, bool):
            sig[name] = "i1"
        elif isinstance(v, int):
            sig[name] = "i32" if -2**31 <= v < 2**31 else "i64"
        elif isinstance(v, float):
            sig[name] = "fp32"
        elif v is None:
            sig[name] = "none"
    return sig


# ---------------------------------------------------------------------------------------------
# The captured session.

def _inputs(mod, path, seed, device):
    """get_inputs() drawn from seed (as created: CPU, for KernelBench-style files), moved to device."""
    return make_inputs(mod, path, seed, device, draw_on="cpu", inputs_of="launch()'s")


def _call_inputs(inputs):
    args, _ = _clone_values(inputs, {})
    return args


class Session:
    """The original file loaded once, its inputs and every kernel launch launch() makes, per seed."""

    def __init__(self, path, device, seeds):
        self.path = os.path.abspath(path)
        self.source = _read(self.path)
        self.device = device
        self.seeds = list(seeds)
        try:
            self.facts = parse_file(self.source)
        except SyntaxError as exc:
            line = f":{exc.lineno}" if exc.lineno else ""
            raise ProblemError(f"{self.path}{line}: syntax error: {exc.msg}") from None
        if not self.facts["kernels"]:
            raise ProblemError(f"{self.path}: defines no @triton.jit kernel at module level ({CONVENTION})")
        self.kernel_names = [k["name"] for k in self.facts["kernels"]]
        try:
            self.mod = load_file(self.path, self.source)
        except SyntaxError as exc:  # in a file it imports
            where = exc.filename if exc.filename and not exc.filename.startswith("<kernelopt") else self.path
            raise ProblemError(f"{where}{':' + str(exc.lineno) if exc.lineno else ''}: syntax error: {exc.msg}") from None
        except (Exception, SystemExit) as exc:
            raise ProblemError(f"{self.path}: importing it raised {describe(exc)}") from None
        for attr in ("launch", "get_inputs"):
            if not callable(getattr(self.mod, attr, None)):
                what = "defines no" if not hasattr(self.mod, attr) else "has a non-callable"
                raise ProblemError(f"{self.path}: {what} `{attr}()` ({CONVENTION})")
        ref = getattr(self.mod, "reference", None)
        self.has_reference = callable(ref)
        self.objs = {n: getattr(self.mod, n) for n in self.kernel_names if hasattr(getattr(self.mod, n, None), "run")}
        self.inputs, self.outputs, self.launches = {}, {}, {}
        self.site_keys = []      # distinct launch sites, first-seen order: (kernel, line)
        self.mutated = {}        # kernel -> params it was seen to change
        self._reference = {}

    def check_device(self):
        from kernelopt.device.info import NoGpuError
        if str(self.device).startswith("cuda") and not _torch().cuda.is_available():
            raise NoGpuError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False); "
                             "optimizing a Triton kernel needs an NVIDIA GPU, or TRITON_INTERPRET=1 on the CPU "
                             "(see `kernelopt doctor`)")

    def capture(self):
        torch = _torch()
        for seed in self.seeds:  # the inputs first: a broken get_inputs() is reported on any machine
            self.inputs[seed] = _inputs(self.mod, self.path, seed, "cpu")
        self.check_device()
        for seed in self.seeds:
            self.inputs[seed] = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in self.inputs[seed]]
            self.launches[seed] = []
            hooks = self._hook(self.launches[seed])
            try:
                with torch.no_grad():
                    out = self.mod.launch(*_call_inputs(self.inputs[seed]))
                _sync(self.device)
            except Exception as exc:
                if device_failure(exc):
                    raise  # answered as the device's (out of memory: the engine retries on fewer seeds)
                raise ProblemError(f"{self.path}: launch(*get_inputs()) raised {describe(exc)} (seed {seed})") from None
            finally:
                self._unhook(hooks)
            flat = flatten(out)
            if not flat:
                what = "None" if out is None else f"a {type(out).__name__}"
                raise ProblemError(f"{self.path}: launch() returned {what}, not a tensor or a tuple of tensors")
            self.outputs[seed] = flat
            if not self.launches[seed]:
                raise ProblemError(f"{self.path}: launch(*get_inputs()) launched none of the file's @triton.jit "
                                   f"kernels ({', '.join(self.kernel_names)}) as kernel[grid](...)")
        if self.has_reference:
            self._check_reference(self.seeds[0])
        return self

    def _check_reference(self, seed):
        """reference() on the seed's inputs, now rather than after the search: it must run and give as many
        tensors as launch(), of the same shapes (it is what gate 3 and the end-to-end check compare with)."""
        try:
            ref = self.reference(seed)
        except Exception as exc:
            raise ProblemError(f"{self.path}: reference(*get_inputs()) raised {describe(exc)} (seed {seed})") from None
        finally:
            self._reference.pop(seed, None)  # computed again where gate 3 needs it: not held for the whole run
        got = [list(t.shape) for t in ref]
        want = [list(t.shape) for t in self.outputs[seed]]
        if got != want:
            raise ProblemError(f"{self.path}: reference() returned shapes {got}, launch() {want} (seed {seed}): "
                               "reference(*inputs) must compute what launch(*inputs) returns")

    def _site(self, kernel):
        """(kernel, line) of the launch: the innermost frame of this file on the stack."""
        fname = self.mod.__kernelopt_filename__
        f = sys._getframe(2)
        while f is not None and f.f_code.co_filename != fname:
            f = f.f_back
        line = f.f_lineno if f is not None else 0
        best = None
        for s in self.facts["sites"]:
            if s["kernel"] == kernel and s["line"] <= line <= s["end_line"]:
                if best is None or s["end_line"] - s["line"] < best["end_line"] - best["line"]:
                    best = s
        key = (kernel, best["line"] if best else line)
        if key not in self.site_keys:
            self.site_keys.append(key)
        return self.site_keys.index(key)

    def _hook(self, sink):
        hooks = {}
        for name, obj in self.objs.items():
            hooks[name] = obj.__dict__.get("run")
            inner = obj.run
            names = _arg_names(obj)

            def run(*args, _name=name, _inner=inner, _names=names, **kwargs):
                if kwargs.get("warmup"):
                    return _inner(*args, **kwargs)
                grid = kwargs.get("grid")
                kw = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
                a, k = _clone_values(args, kw)
                rec = Launch(_name, self._site(_name), a, k, grid)
                sink.append(rec)
                result = _inner(*args, **kwargs)
                # which tensors the launch changed (mutated_args in the artifact)
                for (label, _, before), (_, _, after) in zip(_tensors(a, k, _names), _tensors(args, kw, _names)):
                    if before.shape == after.shape and not _same(before, after):
                        self.mutated.setdefault(_name, set()).add(label)
                return result

            obj.run = run
        return hooks

    def _unhook(self, hooks):
        for name, saved in hooks.items():
            obj = self.objs[name]
            if saved is None:
                obj.__dict__.pop("run", None)
            else:
                obj.run = saved

    def launches_of(self, seed, name):
        return [l for l in self.launches[seed] if l.kernel == name]

    def launch_entries(self):
        torch = _torch()
        entries = []
        for order, (kernel, line) in enumerate(self.site_keys):
            site = next((s for s in self.facts["sites"] if s["kernel"] == kernel and s["line"] == line), None)
            rec = next(l for seed in self.seeds for l in self.launches[seed]
                       if l.kernel == kernel and self.site_keys[l.site] == (kernel, line))
            if site is None:  # launched from elsewhere than a kernel[grid](...) call in this file
                names = _arg_names(self.objs[kernel])
                args = [names[i] if i < len(names) else str(i) for i in range(len(rec.args))]
                args += [f"{k}={k}" for k in rec.kwargs]
                site = {"args": args, "buffers": [None] * len(args), "numels": []}
            else:  # a buffer is an argument that was a tensor when launched
                values = list(rec.args) + [rec.kwargs.get(k) for k in site["keywords"]]
                site = dict(site, buffers=[b if i < len(values) and isinstance(values[i], torch.Tensor) else None
                                           for i, b in enumerate(site["buffers"])])
            entries.append({"kernel": kernel, "order": order, "line": line, "args": site["args"],
                            "buffers": site["buffers"], "numels": site["numels"]})
        return entries

    def artifact(self):
        sigs = {}
        for name, obj in self.objs.items():
            first = next((l for l in self.launches[self.seeds[0]] if l.kernel == name), None)
            if first is not None:
                constexprs = next(k["constexprs"] for k in self.facts["kernels"] if k["name"] == name)
                sigs[name] = _signature_of(first, _arg_names(obj), constexprs)
        return _artifact(self.source, self.facts, self.launch_entries(), sigs, self.mutated)

    def fingerprints(self, dev_name):
        """{kernel: library fingerprint} (kernelopt/library/fingerprint.py): the kernel's text with the
        helper functions it calls, and every launch's arguments as recorded for the first seed."""
        from kernelopt.library import fingerprint as F
        torch = _torch()
        raw = self.source.encode("utf-8")
        spans = {k["name"]: k["source_span"] for k in self.facts["kernels"]}

        def describe(v):
            if isinstance(v, torch.Tensor):
                return F.tensor_descriptor(v.dtype, tuple(v.shape), v.stride())
            return F.value_descriptor(v)

        out = {}
        for k in self.facts["kernels"]:
            names = [k["name"]] + sorted(h for h in k["helper_functions"] if h in spans)
            text = "\n".join(raw[spans[n][0]:spans[n][1]].decode("utf-8") for n in names)
            launches = [[describe(a) for a in l.args] + [f"{key}={describe(l.kwargs[key])}" for key in sorted(l.kwargs)]
                        for l in self.launches[self.seeds[0]] if l.kernel == k["name"]]
            out[k["name"]] = F.fingerprint(F.normalized_source(text, k["name"]), launches, dev_name)
        return out

    def reference(self, seed):
        """Float64 outputs of reference() on the seed's inputs (floating tensors upcast), once."""
        torch = _torch()
        if seed not in self._reference:
            ins = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                   for x in _call_inputs(self.inputs[seed])]
            with torch.no_grad():
                self._reference[seed] = flatten(self.mod.reference(*ins))
        return self._reference[seed]


def _same(a, b):
    return _checks().same(a, b)


def get_session(args):
    torch = _torch()
    path = os.path.abspath(args["problem"])
    device = device_of(args)
    seeds = tuple(args["seeds"])
    if not os.path.isfile(path):
        _read(path)  # the one-line error
    key = (path, file_hash(path), device, seeds, "triton")
    if key not in _SESSIONS:
        _SESSIONS.clear()  # one problem at a time, as the nn.Module path
        from kernelopt.inputs.module import session as module_sessions
        module_sessions._SESSIONS.clear()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        _SESSIONS[key] = Session(path, device, seeds).capture()
    return _SESSIONS[key]



def _interleaved(fns, trials, warmup=3, before=None, device="cuda"):
    """device.timing.interleaved: CUDA events with an L2 flush on a GPU, the wall clock under the interpreter."""
    from kernelopt.device import timing
    return timing.interleaved(fns, trials=trials, warmup=warmup, before=before, on_gpu=_on_gpu(device))


def _bandwidth(device):
    from kernelopt.device import timing
    return timing.copy_bandwidth_gbps() if _on_gpu(device) else timing.cpu_copy_bandwidth_gbps()


def _error_line(exc):
    lines = [l for l in str(exc).splitlines() if l.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]
