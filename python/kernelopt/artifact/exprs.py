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


def along_row(fn):
    """The names whose values move with r0_index (a position along a reduction's row), in a kernel function."""
    along = {"r0_index"}
    for node in ast.walk(fn):
        name, v = assign_of(node)
        if name is not None and names_in(v) & along:
            along.add(name)
    return along


def by_constant(value, name, op):
    """C when value is `<name> <op> C` with an int C (`xindex % 512`: by_constant(v, "xindex", ast.Mod) = 512),
    else None."""
    if (isinstance(value, ast.BinOp) and isinstance(value.op, op) and isinstance(value.left, ast.Name)
            and value.left.id == name and isinstance(value.right, ast.Constant)
            and isinstance(value.right.value, int) and not isinstance(value.right.value, bool)):
        return value.right.value
    return None
