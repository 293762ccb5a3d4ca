"""What every rewrite family shares: the exception that declines a kernel, and how Inductor writes the loop
over a row."""
import ast


class NotApplicable(Exception):
    """The family does not apply to this kernel; the message says why (for the report)."""


def is_r0_loop(node):
    """`for r0_offset in range(0, r0_numel, R0_BLOCK)` (or tl.range) exactly."""
    if not isinstance(node, ast.For) or node.orelse:
        return False
    if not (isinstance(node.target, ast.Name) and node.target.id == "r0_offset"):
        return False
    it = node.iter
    if not isinstance(it, ast.Call) or it.keywords or ast.unparse(it.func) not in ("range", "tl.range"):
        return False
    return [ast.unparse(a) for a in it.args] == ["0", "r0_numel", "R0_BLOCK"]
