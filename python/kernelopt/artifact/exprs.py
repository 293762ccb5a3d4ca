"""Reading a kernel's index expressions with `ast`, for the artifact parser and the rewrite families alike."""
import ast


def sum_terms(node):
    """The terms of a sum (a + b + c -> [a, b, c]); anything else is one term."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return sum_terms(node.left) + sum_terms(node.right)
    return [node]


def names_in(node):
    """Every name the expression (or statement) reads or writes."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def assign_of(node):
    """(target name, value) of a plain `name = value`, else (None, None)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    return None, None


def row_pass(node, target=None):
    """`for <target> in (tl.)range(0, r0_numel, R0_BLOCK)` exactly, Inductor's pass over a reduction's row
    (target None: any loop variable, as reverse_pass's `r0_step`)."""
    if not isinstance(node, ast.For) or node.orelse or not isinstance(node.target, ast.Name):
        return False
    if target is not None and node.target.id != target:
        return False
    it = node.iter
    if not isinstance(it, ast.Call) or it.keywords or ast.unparse(it.func) not in ("range", "tl.range"):
        return False
    return [ast.unparse(a) for a in it.args] == ["0", "r0_numel", "R0_BLOCK"]


def along_row(fn):
    """The names whose values move with r0_index (a position along a reduction's row), in a kernel function."""
    along = {"r0_index"}
    for node in ast.walk(fn):
        name, v = assign_of(node)
        if name is not None and names_in(v) & along:
            along.add(name)
    return along


def row_index_aliases(fn):
    """r0_index and the names bound to it alone (`r0_1 = r0_index`): an address with one of them as a bare term
    moves one element per element of the row (unit stride along it)."""
    aliases = {"r0_index"}
    for node in ast.walk(fn):
        name, v = assign_of(node)
        if name is not None and isinstance(v, ast.Name) and v.id in aliases:
            aliases.add(name)
    return aliases


def streamed(fn, ops):
    """The calls of `ops` ("tl.load", "tl.store") whose address moves along the row: the row streamed, not a
    per-row value such as the reduction's result."""
    along = along_row(fn)
    return [call for call in ast.walk(fn)
            if isinstance(call, ast.Call) and ast.unparse(call.func) in ops and call.args
            and names_in(call.args[0]) & along]


def by_constant(value, name, op):
    """C when value is `<name> <op> C` with an int C (`xindex % 512`: by_constant(v, "xindex", ast.Mod) = 512),
    else None."""
    if (isinstance(value, ast.BinOp) and isinstance(value.op, op) and isinstance(value.left, ast.Name)
            and value.left.id == name and isinstance(value.right, ast.Constant)
            and isinstance(value.right.value, int) and not isinstance(value.right.value, bool)):
        return value.right.value
    return None
