"""Load generated Triton kernels and launch them, on a GPU or under Triton's interpreter.

On a GPU a kernel is Inductor's own launcher object (CachingAutotuner), taken
from a loaded output module, so what is checked is what ships. Under
TRITON_INTERPRET=1 (CPU, for tests) the kernel source is executed alone and its
@triton.jit function is launched on the grid Inductor's GridExpr computes from
the kernel's config; libdevice calls map to triton.language.math, which the
interpreter implements.
"""
import importlib.util
import os
import sys
import uuid

import torch


def interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def load_module(path):
    """Import an output module file (baseline or stitched) under a unique name."""
    name = f"kernelopt_mod_{uuid.uuid4().hex[:10]}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _prepare_interpreter():
    import triton.language as tl
    import torch._inductor.runtime.triton_helpers as helpers
    helpers.set_driver_to_gpu = lambda: None  # no GPU driver under the interpreter
    # the helpers' own libdevice calls (exp in online softmax, ...): CUDA's libdevice has no
    # interpreter implementation; triton.language.math has
    helpers.libdevice = tl.math


def load_kernel_source(source, name):
    """Execute one kernel's module text; returns its launcher object (CachingAutotuner)."""
    import hashlib
    import linecache
    if interpreting():
        _prepare_interpreter()
    # a name unique to this source: Triton reads a kernel's source back through linecache
    filename = f"<kernelopt {name} {hashlib.sha256(source.encode()).hexdigest()[:16]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    ns = {"__file__": filename, "__name__": f"kernelopt_kernel_{uuid.uuid4().hex[:8]}"}
    exec(compile(source, filename, "exec"), ns)
    if name not in ns:
        raise KeyError(f"kernel source defines no {name}")
    return ns[name]


def config_of(kernel):
    """The launch config of a launcher: the chosen one after a run, else its first."""
    launchers = getattr(kernel, "launchers", None) or []
    cfg = launchers[0].config if launchers else (kernel.configs[0] if kernel.configs else None)
    if cfg is None:
        return None
    return dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)


def pin_config(copy, like):
    """copy (a launcher loaded from a transformed copy of like's source) set to launch with the
    config like chose, where it would otherwise choose again among several: Inductor's
    CachingAutotuner after a run, or triton.autotune's Autotuner. Gate 2's two halves of a grid
    must be cut from one grid."""
    launchers = getattr(like, "launchers", None)
    chosen = launchers[0].config if launchers else getattr(like, "best_config", None)
    if chosen is None:
        return copy
    compiled = getattr(copy, "launchers", None) or []
    if len(compiled) > 1:  # compiled when its module loaded, one launcher per config: keep the chosen one's
        same = [launcher for launcher in compiled if _same_config(launcher.config, chosen)]
        copy.launchers = same[:1] or compiled
    elif not compiled and len(getattr(copy, "configs", None) or []) > 1:
        copy.configs = [chosen]
    return copy


def _same_config(a, b):
    return (a.kwargs, a.num_warps, a.num_stages) == (b.kwargs, b.num_warps, b.num_stages)


def launch(kernel, args, stream=None):
    """Launch kernel on args (tensors and numel ints, in the launch site's order)."""
    if interpreting():
        return _launch_interpreted(kernel, args)
    if stream is None:
        stream = torch.cuda.current_stream().cuda_stream
    return kernel.run(*args, stream=stream)


def _launch_interpreted(kernel, args):
    import triton.language as tl
    from torch._inductor.runtime.triton_heuristics import GridExpr
    cfg = kernel.configs[0]
    jit = kernel.fn
    params = list(jit.arg_names)
    values = dict(zip(params, args))
    meta = {k: v for k, v in values.items() if k.endswith("numel")}
    grid = GridExpr.from_meta(kernel.inductor_meta, cfg).eval_slow(meta)
    jit.fn.__globals__["libdevice"] = tl.math
    jit.fn.__globals__["triton_helpers"] = _interpreter_helpers()
    jit[grid](*args, **cfg.kwargs)


def _interpreter_helpers():
    """Inductor's triton_helpers, with max2/min2 on the interpreter's built-in reductions.

    The interpreter runs a reduction with a @triton.jit combine function one
    element at a time (about 1 s per 1000 elements); tl.max/tl.min are
    vectorized. Interpreter-only: NaN propagation may differ from the GPU.
    """
    import types

    import triton.language as tl
    from torch._inductor.runtime import triton_helpers
    shim = types.SimpleNamespace(**{k: getattr(triton_helpers, k) for k in dir(triton_helpers)
                                    if not k.startswith("__")})
    shim.max2 = lambda a, dim: tl.max(a, dim)
    shim.min2 = lambda a, dim: tl.min(a, dim)
    return shim


GUARD_FILL = 0xFF  # every guard byte; as float32/float16/bfloat16 elements it reads as NaN


def guard_bytes(nbytes):
    """The guard tail a copied storage gets: room for a store past the end of a whole allocation
    (the last row's overrun) to land where it is seen instead of in another buffer."""
    return max(4096, min(nbytes, 1 << 20))


def clone_values(args, kwargs, memo=None):
    """Copies of args/kwargs where each tensor gets a private copy of its whole storage, viewed
    with the same offset, sizes and strides; tensors sharing a storage share the copy. Each copied
    storage ends in a guard tail of GUARD_FILL bytes, which no view covers: gate 2
    (gate_checks.compare_outside_views) sees a store past the end of the allocation there."""
    memo = {} if memo is None else memo

    def one(a):
        if not isinstance(a, torch.Tensor):
            return a
        st = a.untyped_storage()
        key = (a.device, st.data_ptr(), st.nbytes())
        if key not in memo:
            n = st.nbytes()
            buf = torch.empty(n + guard_bytes(n), dtype=torch.uint8, device=a.device)
            buf[:n].copy_(torch.empty(0, dtype=torch.uint8, device=a.device).set_(st, 0, (n,)))
            buf[n:].fill_(GUARD_FILL)
            memo[key] = buf.untyped_storage()
        return torch.empty(0, dtype=a.dtype, device=a.device).set_(memo[key], a.storage_offset(), a.size(), a.stride())

    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def restore_storage(dst, src):
    """Puts src's bytes back into dst, a copy clone_values made of it (or of a copy of it): the
    head gets src's bytes, the rest of dst (its guard tail) the guard fill again."""
    def as_bytes(st):
        return torch.empty(0, dtype=torch.uint8, device=st.device).set_(st, 0, (st.nbytes(),))
    d, s = as_bytes(dst), as_bytes(src)
    n = min(d.numel(), s.numel())
    d[:n].copy_(s[:n])
    d[n:].fill_(GUARD_FILL)


def clone_args(args):
    """Private copies of launch arguments with their layout kept (clone_values): Inductor bakes
    strides into the kernel, so a compacting .clone() of a padded or sliced view would send the
    kernel out of bounds."""
    return clone_values(args, {})[0]


def synthetic_args(artifact, launch_site, seed, device="cpu", scale=1.0):
    """Random arguments for one launch site, built from the artifact's buffer shapes and dtypes."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    args = []
    for text, buf in zip(launch_site["args"], launch_site["buffers"]):
        if buf and buf in artifact["buffers"] and text == buf:
            info = artifact["buffers"][buf]
            dtype = getattr(torch, info.get("dtype") or "float32")
            size = sum((s - 1) * st for s, st in zip(info["shape"], info["stride"])) + 1
            flat = torch.randn(size, generator=gen) * scale
            t = torch.as_strided(flat.to(dtype), info["shape"], info["stride"]).to(device)
            args.append(t)
        else:
            try:
                args.append(int(text))
            except ValueError:
                raise ValueError(f"launch argument {text!r} is neither a plain buffer nor an integer") from None
    return args
