"""What every rewrite family shares: the exception that declines a kernel, how Inductor writes the loop
over a row, and its sizes as constants in the kernel body."""
import ast

from kernelopt.artifact.exprs import row_pass


class NotApplicable(Exception):
    """The family does not apply to this kernel; the message says why (for the report)."""


def is_r0_loop(node):
    """`for r0_offset in range(0, r0_numel, R0_BLOCK)` (or tl.range) exactly."""
    return row_pass(node, "r0_offset")


def int_assign(body, name):
    """The value of a top-level `name = <int literal>` among the statements `body`, else None."""
    for node in body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, int)):
            return node.value.value
    return None


def kernel_function(source, helpers=False):
    """(module tree, its kernel function): the kernel as the engine sends it, its one function; among several, the
    one taking XBLOCK, the others being Inductor's helpers (a scan's combine), which only a family that reads them
    (helpers=True) accepts. NotApplicable otherwise."""
    tree = ast.parse(source)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(fns) == 1:
        return tree, fns[0]
    kernels = [f for f in fns if "XBLOCK" in [a.arg for a in f.args.args]]
    if len(kernels) != 1:
        raise NotApplicable(f"expected one kernel function, found {len(fns)}")
    if not helpers:
        others = ", ".join(f.name for f in fns if f is not kernels[0])
        raise NotApplicable(f"the kernel calls a function of its own ({others}: a scan's combine); "
                            "this family reads a kernel alone")
    return tree, kernels[0]


def constexpr_params(fn):
    """The kernel's parameters annotated `tl.constexpr`, in order."""
    return [a.arg for a in fn.args.args
            if a.annotation is not None and ast.unparse(a.annotation) in ("tl.constexpr", "triton.language.constexpr")]


def call_name(node):
    """`tl.load` for a call of tl.load, else None."""
    return ast.unparse(node.func) if isinstance(node, ast.Call) else None


def assigned_names(node):
    """Every name a statement (or its nested statements) assigns, loop targets included."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for t in targets:
                out += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(sub, (ast.For, ast.comprehension)):
            out += [n.id for n in ast.walk(sub.target) if isinstance(n, ast.Name)]
    return out
