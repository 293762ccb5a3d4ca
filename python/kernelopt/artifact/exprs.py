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
