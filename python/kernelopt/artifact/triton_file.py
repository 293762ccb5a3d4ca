"""A standalone Triton kernel file read with `ast` (no import, no torch): its @triton.jit kernels with
byte spans, launch sites, launch()'s signature, as the artifact the engine reads for an Inductor
output module (artifact/inductor.py). The file convention is README.md's "Standalone Triton kernels"
(inputs/triton/session.py says how a file is loaded and its launches recorded)."""
import ast
import hashlib

from kernelopt.artifact.inductor import _literal, byte_offsets
from kernelopt.artifact.static import _dotted, stored_params  # one ast reading of kernels for both input kinds

CONVENTION = "a standalone Triton file defines @triton.jit kernels, launch(*inputs) and get_inputs()"
KIND = "triton_jit"
_REDUCTIONS = {"tl.sum", "tl.max", "tl.min", "tl.reduce", "tl.argmax", "tl.argmin", "tl.cumsum",
               "tl.cumprod", "tl.associative_scan", "tl.xor_sum"}


def _is_jit(decorator):
    name = _dotted(decorator) or ""
    return name in ("triton.jit", "jit") or name.endswith(".jit")


def parse_file(source):
    """The static facts of a standalone file: {"kernels", "sites", "launch_params", "launch_returns"}.

    Raises SyntaxError. Spans are byte offsets into the UTF-8 source: source_span runs
    from the '@' of the function's first decorator to the end of its body, def_offset is
    where `def` starts relative to it, decorator_span is the @triton.jit expression
    (after its '@', as the Inductor parser gives a heuristics decorator), function_span
    is `def ...` to the end.
    """
    tree = ast.parse(source)
    raw = source.encode("utf-8")
    offs = byte_offsets(source)

    def pos(lineno, col):
        return offs[lineno] + col

    jit_fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and any(_is_jit(d) for d in n.decorator_list)]
    names = {f.name for f in jit_fns}
    kernels = []
    for fn in jit_fns:
        first = fn.decorator_list[0]
        at = raw.rfind(b"@", pos(first.lineno, 0), pos(first.lineno, first.col_offset) + 1)
        begin = at if at >= 0 else pos(first.lineno, first.col_offset)
        end = pos(fn.end_lineno, fn.end_col_offset)
        def_start = pos(fn.lineno, fn.col_offset)
        jit = next(d for d in reversed(fn.decorator_list) if _is_jit(d))
        params, constexprs = [], []
        for a in fn.args.args:
            ann = ast.get_source_segment(source, a.annotation) if a.annotation else ""
            (constexprs if "constexpr" in ann else params).append(a.arg)
        calls = [_dotted(n.func) or "" for n in ast.walk(fn) if isinstance(n, ast.Call)]
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        kernels.append({
            "name": fn.name,
            "kind": KIND,
            "source_span": [begin, end],
            "def_offset": def_start - begin,
            "decorator_span": [pos(jit.lineno, jit.col_offset), pos(jit.end_lineno, jit.end_col_offset)],
            "function_span": [def_start, end],
            "decorators": [_dotted(d) for d in fn.decorator_list],
            "source_hash": hashlib.sha256(raw[begin:end]).hexdigest(),
            "line": fn.lineno,
            "params": params,
            "constexprs": constexprs,
            "stored_params": stored_params(fn),
            "helper_functions": sorted((used & names) - {fn.name}),
            "num_load": sum(c == "tl.load" for c in calls),
            "num_store": sum(c == "tl.store" for c in calls),
            "num_reduction": sum(c in _REDUCTIONS for c in calls),
            "num_loops": sum(isinstance(n, (ast.For, ast.While)) for n in ast.walk(fn)),
        })
    sites = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names):
            args = [ast.get_source_segment(source, a) for a in node.args]
            args += [f"{k.arg}={ast.get_source_segment(source, k.value)}" if k.arg else
                     f"**{ast.get_source_segment(source, k.value)}" for k in node.keywords]
            buffers = [a.id if isinstance(a, ast.Name) else None for a in node.args]
            buffers += [k.value.id if isinstance(k.value, ast.Name) else None for k in node.keywords]
            sites.append({"kernel": node.func.value.id, "line": node.lineno, "end_line": node.end_lineno,
                          "args": args, "buffers": buffers, "keywords": [k.arg for k in node.keywords],
                          "numels": [v for v in map(_literal, node.args) if isinstance(v, int) and not isinstance(v, bool)],
                          "grid": ast.get_source_segment(source, node.func.slice)})
    launch_params, launch_returns = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "launch":
            launch_params = [a.arg for a in node.args.args]
            for sub in ast.walk(node):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    elts = sub.value.elts if isinstance(sub.value, ast.Tuple) else [sub.value]
                    launch_returns = [ast.get_source_segment(source, e) for e in elts]
    return {"kernels": kernels, "sites": sites, "launch_params": launch_params, "launch_returns": launch_returns}


def _artifact(source, facts, launch_entries=(), signatures=None, mutated=None):
    """The artifact JSON module_from_json reads (same keys as the Inductor parser's)."""
    signatures, mutated = signatures or {}, mutated or {}
    kernels = []
    for k in facts["kernels"]:
        kernels.append({
            "name": k["name"], "kind": KIND, "source_hash": k["source_hash"],
            "source_span": k["source_span"], "def_offset": k["def_offset"],
            "decorator_span": k["decorator_span"], "function_span": k["function_span"],
            "decorators": k["decorators"], "line": k["line"],
            "heuristic_args": {}, "size_hints": None, "reduction_hint": None, "grid_type": None,
            "signature": signatures.get(k["name"], {}),
            "params": k["params"], "constexprs": k["constexprs"], "fixed_constexprs": {},
            "mutated_args": _mutated_args(k, signatures.get(k["name"]), mutated.get(k["name"], ())),
            "aten_ops": [], "source_nodes": [], "helper_functions": k["helper_functions"], "graph_fragment": "",
            "num_load": k["num_load"], "num_store": k["num_store"], "num_reduction": k["num_reduction"],
            "num_loops": k["num_loops"],
        })
    return {
        "input_kind": "triton",
        "source_hash": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "source_bytes": len(source.encode("utf-8")),
        "kernels": kernels,
        "launches": list(launch_entries),
        "vendor_calls": [],
        "buffers": {},
        "inputs": facts["launch_params"],
        "outputs": facts["launch_returns"],
    }


def _mutated_args(kernel, signature, observed):
    """Pointer params the kernel stores to (read with ast; pointers as seen at launch where it was
    launched), and any whose tensor a recorded launch changed."""
    stored = set(kernel["stored_params"])
    if signature:
        stored = {p for p in stored if signature.get(p, "").startswith("*")}
    return sorted(stored | set(observed))


def parse_artifact(source):
    """The static artifact (no launches: those are seen only when launch() runs)."""
    return _artifact(source, parse_file(source))

