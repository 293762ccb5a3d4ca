"""The Python package's imports, read with `ast` (issue 21): no module imports itself through others (function-level
imports count: a lazy import only hides a circle), and runtime/ and library/ import nothing from the worker."""
import ast
import os

PACKAGE = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def imports_by_module():
    out = {}
    for dirpath, _, names in os.walk(os.path.join(PACKAGE, "kernelopt")):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            module = os.path.relpath(path, PACKAGE)[:-3].replace(os.sep, ".").removesuffix(".__init__")
            deps = set()
            for node in ast.walk(ast.parse(open(path).read())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kernelopt"):
                    deps.add(node.module)
                elif isinstance(node, ast.Import):
                    deps |= {a.name for a in node.names if a.name.startswith("kernelopt")}
            out[module] = deps
    return out


def circles(graph):
    found, state, stack = [], {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for dep in sorted(graph.get(module, ())):
            if dep not in graph:
                continue
            if state.get(dep) == "open":
                found.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_package():
    graph = imports_by_module()
    assert "kernelopt.coder.rewrite" in graph and "kernelopt.worker.ops" in graph  # the walk found the package
    assert circles(graph) == []


def test_runtime_and_library_do_not_import_the_worker():
    graph = imports_by_module()
    bad = [(m, d) for m, deps in graph.items() for d in deps
           if m.startswith(("kernelopt.runtime", "kernelopt.library")) and d.startswith("kernelopt.worker")]
    assert bad == []
