"""Capture real Inductor output for the bundled examples (run on a GPU machine).

Writes, per example, the generated output module(s) and a versions file into
DEST (default tests/fixtures/inductor). Also exercises the mechanisms kernelopt
relies on (module interception, launch-site hooks, fixed_config launchers) and
prints what it saw, so a torch/triton upgrade that breaks them shows at once.

    python3 scripts/capture_fixtures.py [DEST]
"""
import ast
import hashlib
import importlib.util
import json
import os
import sys
import time

import torch
import triton
from torch._inductor.codecache import PyCodeCache

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# (fixture name, example file, module globals to override). The small variants
# have odd sizes so CPU tests under TRITON_INTERPRET=1 run them quickly and hit
# partial blocks.
EXAMPLES = [
    ("softmax", "softmax", {}),
    ("layernorm", "layernorm", {}),
    ("mlp_block", "mlp_block", {}),
    ("softmax_small", "softmax", {"batch_size": 33, "dim": 1000}),
    ("layernorm_small", "layernorm", {"tokens": 37, "hidden": 768}),
    ("mlp_block_small", "mlp_block", {"tokens": 45, "hidden": 96, "expansion": 2}),
]


def load_problem(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def capture(problem):
    loaded = []
    orig = PyCodeCache.load_by_key_path.__func__

    def patched(cls, key, path, linemap=None, attrs=None, **kw):
        mod = orig(cls, key, path, linemap, attrs, **kw)
        if hasattr(mod, "call"):
            rec = {"path": path, "source": open(path).read(), "args": None, "mod": mod}
            inner = mod.call

            def call(args):
                if rec["args"] is None:
                    rec["args"] = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
                return inner(args)

            mod.call = call
            loaded.append(rec)
        return mod

    PyCodeCache.load_by_key_path = classmethod(patched)
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = problem.Model(*problem.get_init_inputs()).cuda().eval()
            torch.manual_seed(1)
            inputs = problem.get_inputs()
        torch._dynamo.reset()
        compiled = torch.compile(model)
        with torch.no_grad():
            out = compiled(*inputs)
            torch.cuda.synchronize()
    finally:
        PyCodeCache.load_by_key_path = classmethod(orig)
    return model, inputs, compiled, loaded, out


def kernel_defs(source):
    """(name, kernel source) for each async_compile.triton(...) in a module."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Attribute) and f.attr == "triton":
                found.append((node.targets[0].id, node.value.args[1].value))
    return found


def with_fixed_config(src, config):
    """Kernel source with its heuristics decorator replaced by fixed_config(config)."""
    tree = ast.parse(src)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    deco = next(d for d in fn.decorator_list if isinstance(d, ast.Call))
    kw = {k.arg: ast.get_source_segment(src, k.value) for k in deco.keywords}
    lines = src.splitlines(keepends=True)
    start = sum(len(l) for l in lines[: deco.lineno - 1]) + deco.col_offset
    end = sum(len(l) for l in lines[: deco.end_lineno - 1]) + deco.end_col_offset
    new = (f"triton_heuristics.fixed_config(config={config!r}, filename=__file__, "
           f"triton_meta={kw['triton_meta']}, inductor_meta={kw['inductor_meta']})")
    return src[:start] + new + src[end:]


def bench(fn, n=50):
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    times = []
    for _ in range(3):
        fn()
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def main():
    dest = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fixtures", "inductor")
    os.makedirs(dest, exist_ok=True)
    versions = {"torch": torch.__version__, "triton": triton.__version__,
                "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(),
                "python": sys.version.split()[0], "captured": time.strftime("%Y-%m-%d")}
    print(json.dumps(versions))
    with open(os.path.join(dest, "VERSIONS.json"), "w") as f:
        json.dump(versions, f, indent=1)
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
    t = bench(lambda: b.copy_(a), 20)
    print(f"copy bandwidth: {2 * a.numel() / t / 1e6:.0f} GB/s")
    del a, b
    for name, example, overrides in EXAMPLES:
        problem = load_problem(os.path.join(ROOT, "examples", example + ".py"))
        for key, value in overrides.items():
            setattr(problem, key, value)
        model, inputs, compiled, loaded, out = capture(problem)
        print(f"== {name}: {len(loaded)} module(s)")
        for i, rec in enumerate(loaded):
            fn = f"{name}.{i}.py" if len(loaded) > 1 else f"{name}.py"
            with open(os.path.join(dest, fn), "w") as f:
                f.write(rec["source"])
            mod = rec["mod"]
            args = rec["args"]
            # launch-site hook: record each kernel's args and chosen config
            for kname, ksrc in kernel_defs(rec["source"]):
                k = getattr(mod, kname)
                seen = {}
                run = k.run

                def hooked(*a, _run=run, _seen=seen, **kw):
                    _seen.setdefault("args", [type(x).__name__ if not isinstance(x, torch.Tensor)
                                              else f"T{tuple(x.shape)}{x.dtype}" for x in a])
                    _seen.setdefault("kw", list(kw))
                    return _run(*a, **kw)

                k.run = hooked
                base = mod.call(list(args))
                k.run = run
                cfg = k.launchers[0].config if k.launchers else None
                print(f"  {kname}: fn={k.fn.__name__} args={seen.get('args')} kw={seen.get('kw')} "
                      f"configs={len(k.configs or [])} chosen={cfg}")
                if cfg is None:
                    continue
                conf = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
                for key in list(conf):
                    if key.endswith("BLOCK") and not key.startswith("R") and conf[key] > 1:
                        conf[key] = max(1, conf[key] // 2)
                new_ksrc = with_fixed_config(ksrc, conf)
                new_src = rec["source"].replace(ksrc, new_ksrc, 1)
                p = os.path.join("/tmp", f"ko_probe_{name}_{i}_{kname}.py")
                open(p, "w").write(new_src)
                spec = importlib.util.spec_from_file_location(f"ko_probe_{kname}", p)
                m2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(m2)
                out2 = m2.call(list(args))
                ok = all(torch.allclose(x, y, atol=1e-4, rtol=1e-4) for x, y in zip(base, out2))
                k2 = getattr(m2, kname)
                print(f"    fixed_config {conf}: match={ok} launcher={k2.launchers[0].config}")
                print(f"    module ms: base={bench(lambda: mod.call(list(args))):.4f} "
                      f"fixed={bench(lambda: m2.call(list(args))):.4f}")
        with torch.no_grad():
            print(f"  eager ms={bench(lambda: model(*inputs)):.4f} compiled ms={bench(lambda: compiled(*inputs)):.4f}")


if __name__ == "__main__":
    main()
