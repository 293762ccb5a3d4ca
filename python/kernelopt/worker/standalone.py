"""Standalone Triton kernel files as input (`"input_kind": "triton"` on every op).

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
import ast
import hashlib
import os
import sys
import time
import types
import uuid

from kernelopt.worker.static import _dotted, _stored_params  # one ast reading of kernels for both input kinds
from kernelopt.worker.problem import ProblemError, describe, file_hash

CONVENTION = "a standalone Triton file defines @triton.jit kernels, launch(*inputs) and get_inputs()"
KIND = "triton_jit"
_SESSIONS = {}
_MODULES = {}
_REDUCTIONS = {"tl.sum", "tl.max", "tl.min", "tl.reduce", "tl.argmax", "tl.argmin", "tl.cumsum",
               "tl.cumprod", "tl.associative_scan", "tl.xor_sum"}


def _torch():
    import torch
    return torch


def interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def device_of(args):
    """The device tensors live on: the CPU under Triton's interpreter, else the requested one."""
    return "cpu" if interpreting() else args.get("device", "cuda")


def _on_gpu(device):
    torch = _torch()
    return str(device).startswith("cuda") and torch.cuda.is_available() and not interpreting()


def _sync(device):
    if _on_gpu(device):
        _torch().cuda.synchronize()


# ---------------------------------------------------------------------------------------------
# The file read with `ast`: kernels with byte spans, launch sites, launch()'s signature.

def _byte_offsets(source):
    starts, pos = [0, 0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line.encode("utf-8"))
        starts.append(pos)
    return starts


def _is_jit(decorator):
    name = _dotted(decorator) or ""
    return name in ("triton.jit", "jit") or name.endswith(".jit")


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def parse_file(source):
    """The static facts of a standalone file: {"kernels", "sites", "launch_params", "launch_returns"}.

    Raises SyntaxError. Spans are byte offsets into the UTF-8 source: source_span runs
    from the '@' of the function's first decorator to the end of its body, def_offset is
    where `def` starts relative to it, decorator_span is the @triton.jit expression
    (after its '@', as the Inductor parser gives a heuristics decorator), function_span
    is `def ...` to the end.
    """
    tree = ast.parse(source)
    raw = source.encode("utf-8")
    offs = _byte_offsets(source)

    def pos(lineno, col):
        return offs[lineno] + col

    jit_fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and any(_is_jit(d) for d in n.decorator_list)]
    names = {f.name for f in jit_fns}
    kernels = []
    for fn in jit_fns:
        first = fn.decorator_list[0]
        at = raw.rfind(b"@", pos(first.lineno, 0), pos(first.lineno, first.col_offset) + 1)
        begin = at if at >= 0 else pos(first.lineno, first.col_offset)
        end = pos(fn.end_lineno, fn.end_col_offset)
        def_start = pos(fn.lineno, fn.col_offset)
        jit = next(d for d in reversed(fn.decorator_list) if _is_jit(d))
        params, constexprs = [], []
        for a in fn.args.args:
            ann = ast.get_source_segment(source, a.annotation) if a.annotation else ""
            (constexprs if "constexpr" in ann else params).append(a.arg)
        calls = [_dotted(n.func) or "" for n in ast.walk(fn) if isinstance(n, ast.Call)]
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        kernels.append({
            "name": fn.name,
            "kind": KIND,
            "source_span": [begin, end],
            "def_offset": def_start - begin,
            "decorator_span": [pos(jit.lineno, jit.col_offset), pos(jit.end_lineno, jit.end_col_offset)],
            "function_span": [def_start, end],
            "decorators": [_dotted(d) for d in fn.decorator_list],
            "source_hash": hashlib.sha256(raw[begin:end]).hexdigest(),
            "line": fn.lineno,
            "params": params,
            "constexprs": constexprs,
            "stored_params": _stored_params(fn),
            "helper_functions": sorted((used & names) - {fn.name}),
            "num_load": sum(c == "tl.load" for c in calls),
            "num_store": sum(c == "tl.store" for c in calls),
            "num_reduction": sum(c in _REDUCTIONS for c in calls),
            "num_loops": sum(isinstance(n, (ast.For, ast.While)) for n in ast.walk(fn)),
        })
    sites = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names):
            args = [ast.get_source_segment(source, a) for a in node.args]
            args += [f"{k.arg}={ast.get_source_segment(source, k.value)}" if k.arg else
                     f"**{ast.get_source_segment(source, k.value)}" for k in node.keywords]
            buffers = [a.id if isinstance(a, ast.Name) else None for a in node.args]
            buffers += [k.value.id if isinstance(k.value, ast.Name) else None for k in node.keywords]
            sites.append({"kernel": node.func.value.id, "line": node.lineno, "end_line": node.end_lineno,
                          "args": args, "buffers": buffers, "keywords": [k.arg for k in node.keywords],
                          "numels": [v for v in map(_literal, node.args) if isinstance(v, int) and not isinstance(v, bool)],
                          "grid": ast.get_source_segment(source, node.func.slice)})
    launch_params, launch_returns = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "launch":
            launch_params = [a.arg for a in node.args.args]
            for sub in ast.walk(node):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    elts = sub.value.elts if isinstance(sub.value, ast.Tuple) else [sub.value]
                    launch_returns = [ast.get_source_segment(source, e) for e in elts]
    return {"kernels": kernels, "sites": sites, "launch_params": launch_params, "launch_returns": launch_returns}


def _artifact(source, facts, launch_entries=(), signatures=None, mutated=None):
    """The artifact JSON module_from_json reads (same keys as the Inductor parser's)."""
    signatures, mutated = signatures or {}, mutated or {}
    kernels = []
    for k in facts["kernels"]:
        kernels.append({
            "name": k["name"], "kind": KIND, "source_hash": k["source_hash"],
            "source_span": k["source_span"], "def_offset": k["def_offset"],
            "decorator_span": k["decorator_span"], "function_span": k["function_span"],
            "decorators": k["decorators"], "line": k["line"],
            "heuristic_args": {}, "size_hints": None, "reduction_hint": None, "grid_type": None,
            "signature": signatures.get(k["name"], {}),
            "params": k["params"], "constexprs": k["constexprs"], "fixed_constexprs": {},
            "mutated_args": _mutated_args(k, signatures.get(k["name"]), mutated.get(k["name"], ())),
            "aten_ops": [], "source_nodes": [], "helper_functions": k["helper_functions"], "graph_fragment": "",
            "num_load": k["num_load"], "num_store": k["num_store"], "num_reduction": k["num_reduction"],
            "num_loops": k["num_loops"],
        })
    return {
        "input_kind": "triton",
        "source_hash": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "source_bytes": len(source.encode("utf-8")),
        "kernels": kernels,
        "launches": list(launch_entries),
        "vendor_calls": [],
        "buffers": {},
        "inputs": facts["launch_params"],
        "outputs": facts["launch_returns"],
    }


def _mutated_args(kernel, signature, observed):
    """Pointer params the kernel stores to (read with ast; pointers as seen at launch where it was
    launched), and any whose tensor a recorded launch changed."""
    stored = set(kernel["stored_params"])
    if signature:
        stored = {p for p in stored if signature.get(p, "").startswith("*")}
    return sorted(stored | set(observed))


def parse_artifact(source):
    """The static artifact (no launches: those are seen only when launch() runs)."""
    return _artifact(source, parse_file(source))


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
    from kernelopt.worker import gate_checks  # imports torch: not at this module's import (op_parse needs none)
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

def flatten(out):
    from kernelopt.worker.session import flatten as _flatten
    return _flatten(out)


def _inputs(mod, path, seed, device):
    """get_inputs() drawn from seed (as created: CPU, for KernelBench-style files), moved to device."""
    torch = _torch()
    torch.manual_seed(seed)
    try:
        inputs = mod.get_inputs()
    except Exception as exc:
        raise ProblemError(f"{path}: get_inputs() raised {describe(exc)}") from None
    if not isinstance(inputs, (list, tuple)):
        raise ProblemError(f"{path}: get_inputs() returned a {type(inputs).__name__}, not a list of launch()'s inputs")
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


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
        from kernelopt.worker.ops import NoGpuError
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
        return self

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
    seeds = tuple(args.get("seeds") or [0, 1, 2])
    if not os.path.isfile(path):
        _read(path)  # the one-line error
    key = (path, file_hash(path), device, seeds, "triton")
    if key not in _SESSIONS:
        _SESSIONS.clear()  # one problem at a time, as the nn.Module path
        from kernelopt.worker import session as module_sessions
        module_sessions._SESSIONS.clear()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        _SESSIONS[key] = Session(path, device, seeds).capture()
    return _SESSIONS[key]


# ---------------------------------------------------------------------------------------------
# Timing: CUDA events with L2 flush on a GPU (timing.py), wall clock under the interpreter.

def _interleaved(fns, trials, warmup=3, before=None, device="cuda"):
    if _on_gpu(device):
        from kernelopt.worker import timing
        return timing.interleaved(fns, trials=trials, warmup=warmup, before=before)
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            if before:
                before(n)
            fns[n]()
    from kernelopt.worker.timing import trial_orders
    samples = {n: [] for n in names}
    orders = trial_orders(names)
    for t in range(trials):
        for n in orders[t % len(orders)]:
            if before:
                before(n)
            start = time.perf_counter()
            fns[n]()
            samples[n].append((time.perf_counter() - start) * 1e3)
    return samples


_cpu_bandwidth = None


def _bandwidth(device):
    global _cpu_bandwidth
    if _on_gpu(device):
        from kernelopt.worker import timing
        return timing.copy_bandwidth_gbps()
    if _cpu_bandwidth is None:
        torch = _torch()
        a = torch.empty(1 << 24, dtype=torch.uint8)
        b = torch.empty_like(a)
        ms = sorted(_interleaved({"c": lambda: b.copy_(a)}, trials=5, warmup=1, device="cpu")["c"])[2]
        _cpu_bandwidth = 2 * a.numel() / (ms * 1e-3) / 1e9
    return _cpu_bandwidth


def _error_line(exc):
    lines = [l for l in str(exc).splitlines() if l.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]


# ---------------------------------------------------------------------------------------------
# The ops (same result shapes as ops.py's nn.Module ones).

def op_validate(args):
    s = get_session(args)
    return {"problem": s.path, "problem_hash": file_hash(s.path)}


def op_capture(args):
    import shutil
    from kernelopt.worker.ops import _versions
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
    from kernelopt.worker.ops import _versions
    torch = _torch()
    s = get_session(args)
    seed = s.seeds[0]
    reps = int(args.get("reps", 20))
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
    from kernelopt.worker.kernels import pin_config  # imports torch, as _checks()

    def halves():  # the upper-half and lower-half copies (gate_checks.program_halves), after the candidate ran
        texts = checks.program_halves(_read(cand_path), name) or []
        copies = [pin_config(_kernel_obj(load_file(cand_path, t), name, cand_path), cand) for t in texts]
        return tuple((lambda l, k=k: l.run(k)) for k in copies) or None
    return checks.check_launches(records, lambda l: l.run(base), lambda l: l.run(cand), _arg_names(base),
                                 args.get("atol", 1e-4), args.get("rtol", 1e-4),
                                 args.get("repeats", checks.DEFAULT_REPEATS), lambda: _sync(s.device), _error_line,
                                 halves=halves)


def _model_runs(s, cand_mod, atol, rtol):
    from kernelopt.worker.compare import compare_tensors, error_vs_reference, specials_vs_reference, tolerance_for
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
            run["error"] = _error_line(exc)
            runs.append(run)
            continue
        if len(cand_out) != len(base_out):
            run["error"] = f"launch() returned {len(cand_out)} tensors, the original {len(base_out)}"
            runs.append(run)
            continue
        ref = None
        for i, (b, c) in enumerate(zip(base_out, cand_out)):
            a, r = tolerance_for(b.dtype, atol, rtol)
            ev = compare_tensors(c, b, a, r)
            out = {"index": i, "matches_baseline": ev["mismatches"] == 0 and ev["nan_mismatches"] == 0
                   and ev["inf_mismatches"] == 0, "max_abs_diff": ev["max_abs_err"],
                   "ref_err_baseline": None, "ref_err_candidate": None,
                   "ref_special_baseline": None, "ref_special_candidate": None}
            if not out["matches_baseline"] and s.has_reference:
                try:
                    if ref is None:
                        ref = s.reference(seed)
                    if len(ref) == len(base_out) and ref[i].shape == b.shape:
                        out["ref_err_baseline"] = error_vs_reference(b, ref[i])
                        out["ref_err_candidate"] = error_vs_reference(c, ref[i])
                        out["ref_special_baseline"] = specials_vs_reference(b, ref[i])
                        out["ref_special_candidate"] = specials_vs_reference(c, ref[i])
                except Exception as exc:
                    out["reference_error"] = _error_line(exc)
            run["outputs"].append(out)
        runs.append(run)
    return runs


def op_model_check(args):
    """Gate 3 evidence: launch() of the candidate file vs the original's, float64 reference() where they differ."""
    s = get_session(args)
    cand = _load_cached(args["candidate_module"])
    if not callable(getattr(cand, "launch", None)):
        raise ProblemError(f"{args['candidate_module']}: defines no `launch()`")
    runs = _model_runs(s, cand, args.get("atol", 1e-4), args.get("rtol", 1e-4))
    return {"runs": runs, "reference": s.has_reference}


def op_bench(args):
    """Interleaved samples of the baseline and each candidate: one kernel's launches, or launch()."""
    torch = _torch()
    s = get_session(args)
    seed = s.seeds[0]
    trials, warmup = int(args.get("trials", 100)), int(args.get("warmup", 3))
    before = None
    if args.get("mode", "kernel") == "kernel":
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
        before = restore if args.get("restore", True) else None
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
    from kernelopt.worker.compare import compare_tensors, error_vs_reference, tolerance_for
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
        from kernelopt.worker.ops import NoGpuError
        raise NoGpuError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False)")
    atol, rtol = args.get("atol", 1e-4), args.get("rtol", 1e-4)
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
            a, rt = tolerance_for(o.dtype, atol, rtol)
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
    gpu_samples, trials = None, int(args.get("trials", 100))
    with torch.no_grad():
        samples = _interleaved(fns, trials=trials, warmup=3, device=device)
        if _on_gpu(device):  # under the interpreter there is no host time apart from the kernels' to hide
            from kernelopt.worker import timing
            gpu_samples = timing.host_hidden(fns, trials=trials)
    if not has_ref:
        samples["eager"] = list(samples["baseline"])
        if gpu_samples:
            gpu_samples["eager"] = list(gpu_samples["baseline"])
    out = {"runs": runs, "substituted": substituted, "samples_ms": samples, "reference": has_ref}
    if gpu_samples:
        out["gpu_samples_ms"] = gpu_samples
    return out
