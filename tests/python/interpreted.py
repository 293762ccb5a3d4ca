"""Captured Inductor kernels under Triton's interpreter, for the rewrite families' tests: a kernel's source as the
engine sends it, its baked-in sizes shrunk, loaded with stand-ins for what the interpreter lacks (libdevice;
triton_helpers' max2/min2 on its vectorized reductions)."""
import os
import re
import subprocess
import sys

import pytest

from kernelopt.artifact.inductor import parse_module
from kernelopt.device import kernels

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")
# what a bare kernel function (no imports of its own) needs to load
HEADER = ("import triton\nimport triton.language as tl\nfrom torch._inductor.runtime import triton_helpers\n"
          "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n\n")


def compiled_apart(script):
    """stdout of `script` run in a Python process of its own without TRITON_INTERPRET, from the repository root
    (Triton's own compiler there: Inductor's helpers, once loaded for the interpreter, cannot be compiled); the
    test is skipped where the script prints SKIP (no ptxas beside Triton)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.path.join(root, "python")
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(out.stdout.strip())
    return out.stdout


def captured(path, index=0):
    """(kernel facts, kernel source as the engine sends it: imports, helpers, decorated kernel) of the index-th
    kernel of a captured module."""
    src = open(path).read()
    k = parse_module(src)["kernels"][index]
    s, e = k["source_span"]
    return k, src.encode()[s:e].decode()


def runnable(text, rows, cols):
    """Inductor's decorator and driver lines out, the captured sizes (`xnumel = R`, `r0_numel = C`, `C*x0`) shrunk
    to rows x cols."""
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith("@triton_heuristics."):
            skip = True
        if skip:
            skip = not line.startswith(")")
            continue
        if "set_driver_to_gpu" in line or line.startswith("from torch._inductor.runtime.hints"):
            continue
        out.append(line)
    text = "\n".join(out)
    cap_cols = int(re.search(r"r0_numel = (\d+)", text).group(1))
    text = re.sub(r"xnumel = \d+", f"xnumel = {rows}", text)
    text = re.sub(r"r0_numel = \d+", f"r0_numel = {cols}", text)
    return re.sub(rf"\b{cap_cols} ?\* ?x0\b", f"{cols}*x0", text)


def shrink(text, rows, cols, old_rows, old_cols):
    """A bare kernel's sizes old_rows x old_cols (its constants, `C*x0` and `float(C)`) made rows x cols."""
    text = text.replace(f"xnumel = {old_rows}", f"xnumel = {rows}").replace(f"r0_numel = {old_cols}", f"r0_numel = {cols}")
    return text.replace(f"{old_cols}*x0", f"{cols}*x0").replace(f"{float(old_cols)}", f"{float(cols)}")


def jit_of(text, name, libdevice=None, helpers=None):
    """The kernel `name` of text, loaded for the interpreter: `libdevice` (default triton.language.math) and
    `helpers` (default the interpreter's triton_helpers) in the globals of the kernel and of the @triton.jit
    functions beside it."""
    import triton.language as tl
    kernels._prepare_interpreter()
    jit = kernels.load_kernel_source(text, name)
    libdevice = tl.math if libdevice is None else libdevice
    helpers = kernels._interpreter_helpers() if helpers is None else helpers
    for fn in [jit] + [v for v in jit.fn.__globals__.values() if hasattr(v, "fn") and hasattr(v.fn, "__globals__")]:
        fn.fn.__globals__["libdevice"] = libdevice
        fn.fn.__globals__["triton_helpers"] = helpers
    return jit
