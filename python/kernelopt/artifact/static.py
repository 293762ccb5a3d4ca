"""Facts about a candidate kernel's source, read with `ast` and never executed.

The engine's static gate (src/verify/static_gate.cpp) decides from these facts
whether the source may run at all; this module only reports what is there.
"""
import ast


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return None


def _is_literal(node):
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, SyntaxError, TypeError):
        return False


def stored_params(fn):
    """Pointer params written through tl.store / tl.atomic_* in fn (the base name of the address)."""
    params = {a.arg for a in fn.args.args}
    stored = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            if (name == "tl.store" or name.startswith("tl.atomic_")) and node.args:
                for sub in ast.walk(node.args[0]):
                    if isinstance(sub, ast.Name) and sub.id in params:
                        stored.add(sub.id)
    return sorted(stored)


def analyze_source(source):
    """The facts dict the static gate reads (see src/verify/static_gate.hpp)."""
    facts = {"parse_error": None, "imports": [], "toplevel": [], "functions": [], "calls": [],
             "names": [], "stored_params": {}}
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        facts["parse_error"] = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        return facts
    for node in tree.body:
        entry = {"kind": type(node).__name__, "line": node.lineno,
                 "text": (ast.get_source_segment(source, node) or "").splitlines()[0][:200]}
        if isinstance(node, ast.Assign):
            entry["literal"] = _is_literal(node.value)
        facts["toplevel"].append(entry)
        if isinstance(node, ast.FunctionDef):
            constexprs, params = [], []
            for a in node.args.args:
                ann = ast.get_source_segment(source, a.annotation) if a.annotation else ""
                (constexprs if "constexpr" in ann else params).append(a.arg)
            facts["functions"].append({"name": node.name, "params": params, "constexprs": constexprs,
                                       "decorators": [_dotted(d) for d in node.decorator_list],
                                       "line": node.lineno,
                                       "first_line": min([d.lineno for d in node.decorator_list] + [node.lineno]),
                                       "end_line": node.end_lineno})
            facts["stored_params"][node.name] = stored_params(node)
    names, calls = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                facts["imports"].append({"module": alias.name, "names": [], "line": node.lineno})
        elif isinstance(node, ast.ImportFrom):
            facts["imports"].append({"module": "." * node.level + (node.module or ""),
                                     "names": [a.name for a in node.names], "line": node.lineno})
        elif isinstance(node, ast.Call):
            calls.append({"name": _dotted(node.func) or "<expr>", "line": node.lineno})
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            names.add(node.attr)
    facts["calls"] = calls
    facts["names"] = sorted(names)
    return facts


_GRID_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def analyze_grid(exprs, names):
    """Violations of a grid: 1-3 integer expressions over `names` (the kernel's
    numel parameters) with + - * // % and parentheses only; never evaluated here."""
    violations = []
    if not isinstance(exprs, list) or not 1 <= len(exprs) <= 3:
        return ["grid must be a list of 1 to 3 expressions"]
    for i, text in enumerate(exprs):
        if not isinstance(text, str) or len(text) > 200:
            violations.append(f"grid[{i}] is not a short string")
            continue
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            violations.append(f"grid[{i}] {text!r}: SyntaxError: {exc.msg}")
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Expression, ast.Load, ast.BinOp, ast.USub) + _GRID_OPS):
                continue
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                continue
            if isinstance(node, ast.Constant) and type(node.value) is int:
                continue
            if isinstance(node, ast.Name) and node.id in names:
                continue
            what = node.id if isinstance(node, ast.Name) else type(node).__name__
            violations.append(f"grid[{i}] {text!r}: {what} is not allowed "
                              f"(integers, {', '.join(sorted(names)) or 'no names'}, + - * // % only)")
            break
    return violations
