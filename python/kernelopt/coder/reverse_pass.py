"""The reverse_pass family (see coder/rewrite.py): in a looped reduction with two or more passes over rows too
long to keep on chip, a later pass that carries nothing from one block to the next walks the row from its end, so
it first re-reads what the previous pass left in L2. Block sizes stay tunable."""
import ast

from kernelopt.coder.common import NotApplicable, is_r0_loop as _is_r0_loop
from kernelopt.coder.common import assigned_names as _assigned_names, call_name as _call_name
from kernelopt.coder.common import constexpr_params as _constexpr_params, kernel_function as _function


def _upward_reads(node):
    """Names a statement reads from before it: for a loop, what its iterator and the body's
    statements read before the body assigns them."""
    if not isinstance(node, ast.For):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out = {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)}
    assigned = set(_assigned_names(ast.Assign(targets=[node.target], value=ast.Constant(0))))
    for sub in node.body:
        out.update(_upward_reads(sub) - assigned)
        assigned.update(_assigned_names(sub))
    return out


def _used_after(body, at, names):
    """Whether a statement after body[at] reads one of `names` as body[at] left it."""
    live = set(names)
    for node in body[at + 1:]:
        if _upward_reads(node) & live:
            return True
        if isinstance(node, ast.Assign):
            live -= set(_assigned_names(node))
    return False


def _derived_from(loop, seed):
    """Names of the loop body whose value depends on `seed` (through top-level assignments)."""
    out = {seed}
    for node in loop.body:
        if isinstance(node, ast.Assign):
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if reads & out:
                out.update(_assigned_names(node))
    return out


def reverse_pass(source):
    """See the module docstring. Returns (code, meta, notes)."""
    tree, fn = _function(source)
    if "R0_BLOCK" not in _constexpr_params(fn):
        raise NotApplicable("not a looped reduction over one dimension (no R0_BLOCK)")
    loops = [i for i, n in enumerate(fn.body) if _is_r0_loop(n)]
    if len(loops) < 2:
        raise NotApplicable("one pass over the row: nothing is read twice")
    for node in fn.body:
        if not _is_r0_loop(node) and any(_is_r0_loop(s) for s in ast.walk(node) if s is not node):
            raise NotApplicable("a loop over the row is nested in other control flow")
    reversed_passes = []
    for k, i in enumerate(loops[1:], start=2):
        loop = fn.body[i]
        if any(isinstance(s, (ast.Break, ast.Continue, ast.Return, ast.While, ast.For)) for s in ast.walk(loop)
               if s is not loop):
            continue
        if _upward_reads(loop) & set(_assigned_names(loop)):
            continue  # an accumulator: its order is the original's (rounding stays the same)
        if _used_after(fn.body, i, set(_assigned_names(loop)) | {"r0_offset"}):
            continue  # the last trip's values are read after the loop; reversed, another trip is last
        calls = [_call_name(c) for c in ast.walk(loop) if isinstance(c, ast.Call)]
        if any(c and (c.startswith("tl.atomic") or c.endswith(".store") and c != "tl.store") for c in calls):
            continue
        varying = _derived_from(loop, "r0_offset")
        stores = [c for c in ast.walk(loop) if isinstance(c, ast.Call) and _call_name(c) == "tl.store"]
        if not stores or not all(c.args and any(isinstance(n, ast.Name) and n.id in varying
                                                for n in ast.walk(c.args[0])) for c in stores):
            continue  # a store whose address does not move with the block could see its order change
        # for r0_step in range(0, r0_numel, R0_BLOCK): r0_offset = <last block start> - r0_step
        step = ast.parse("r0_offset = (r0_numel - 1) // R0_BLOCK * R0_BLOCK - r0_step").body[0]
        loop.target = ast.Name(id="r0_step", ctx=ast.Store())
        loop.body = [step] + loop.body
        reversed_passes.append(k)
    if not reversed_passes:
        raise NotApplicable("no later pass is free of carried state with stores that move with the block")
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    notes = (f"reverse pass: pass(es) {', '.join(map(str, reversed_passes))} of {len(loops)} walk the row from its end "
             "(re-reads hit what the previous pass left in L2)")
    return "@triton.jit\n" + ast.unparse(fn) + "\n", {}, notes
