"""Parse an Inductor output module into kernelopt's artifact JSON, with `ast`.

The artifact names what the engine may change (Triton sub-kernels, each with
the byte spans of its source and of its heuristics decorator inside the module)
and what it must keep (vendor calls, the wrapper). Spans are byte offsets into
the module source, so the C++ stitcher can splice without re-parsing Python.
Pure Python: no torch import, so it runs (and is tested) anywhere.
"""
import ast
import hashlib
import re

from kernelopt.artifact.exprs import assign_of, by_constant, names_in, row_pass, streamed, sum_terms

# Decorators Inductor puts on generated kernels; their name is the kernel kind.
HEURISTICS = {"pointwise", "reduction", "persistent_reduction", "split_scan", "template",
              "foreach", "user_autotune", "fixed_config", "cooperative_reduction"}
VENDOR_PREFIXES = ("extern_kernels.", "aten.", "torch.ops.")

_ATEN_RE = re.compile(r"Original ATen: \[(.*?)\]")
_NODES_RE = re.compile(r"Topologically Sorted Source Nodes: \[(.*?)\]")
_SHAPE_DTYPES = {
    "torch.float32": "float32", "torch.float16": "float16", "torch.bfloat16": "bfloat16",
    "torch.float64": "float64", "torch.int64": "int64", "torch.int32": "int32",
    "torch.int16": "int16", "torch.int8": "int8", "torch.uint8": "uint8", "torch.bool": "bool",
}


class ArtifactError(ValueError):
    """The module is not Inductor output kernelopt understands."""
    kind = "artifact"


def byte_offsets(source):
    """Start byte offset of each line (1-based line numbers index into it)."""
    starts, pos = [0, 0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line.encode("utf-8"))
        starts.append(pos)
    return starts


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _dict_literal(node):
    """A dict display's literal entries; entries that are not literals are skipped."""
    if not isinstance(node, ast.Dict):
        return {}
    out = {}
    for k, v in zip(node.keys, node.values):
        key = _literal(k) if k is not None else None
        if not isinstance(key, str):
            continue
        val = _literal(v)
        if val is None and isinstance(v, ast.Dict):
            val = _dict_literal(v)
        if isinstance(val, set):
            val = sorted(val)
        out[key] = val
    return out


def _comment_block(lines, lineno):
    """The contiguous comment lines just above 1-based line `lineno`."""
    block, i = [], lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.append(lines[i].strip()[1:].strip() if lines[i].strip() != "#" else "")
        i -= 1
    return list(reversed(block))


def _kernel_from_source(name, ksrc, base_byte):
    """Facts about one kernel source; spans are shifted by base_byte (the module offset)."""
    tree = ast.parse(ksrc)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    fn = next((f for f in fns if f.name == name), None)
    if fn is None:
        raise ArtifactError(f"kernel {name}: no function named {name} in its source")
    offs = byte_offsets(ksrc)
    deco = None
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in HEURISTICS:
            deco = d
    if deco is None:
        raise ArtifactError(f"kernel {name}: no triton_heuristics decorator")
    kwargs = {k.arg: k.value for k in deco.keywords if k.arg}
    segment = {k: ast.get_source_segment(ksrc, v) for k, v in kwargs.items()}
    triton_meta = _dict_literal(kwargs.get("triton_meta"))
    inductor_meta = _dict_literal(kwargs.get("inductor_meta"))
    params, constexprs = [], []
    for a in fn.args.args:
        ann = ast.get_source_segment(ksrc, a.annotation) if a.annotation else ""
        (constexprs if "constexpr" in ann else params).append(a.arg)
    reduction_hint = segment.get("reduction_hint")
    # constexpr assignments in the body (persistent reductions fix R0_BLOCK there)
    body_constexprs = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            ann = ast.get_source_segment(ksrc, stmt.annotation) or ""
            if "constexpr" in ann and stmt.value is not None:
                val = _literal(stmt.value)
                if isinstance(val, int):
                    body_constexprs[stmt.target.id] = val
    signature = triton_meta.get("signature") or {}
    return {
        "unmasked_numel": _unmasked_numel(fn),
        "row_run_bytes": _row_run_bytes(fn, signature) if deco.func.attr == "reduction" else None,
        "row_pass_loads": _row_pass_loads(fn, signature) if deco.func.attr == "reduction" else {},
        "name": name,
        "kind": deco.func.attr,
        "decorator_span": [base_byte + offs[deco.lineno] + deco.col_offset,
                           base_byte + offs[deco.end_lineno] + deco.end_col_offset],
        "function_span": [base_byte + offs[fn.lineno] + fn.col_offset,
                          base_byte + offs[fn.end_lineno] + fn.end_col_offset],
        "heuristic_args": segment,
        "size_hints": _literal(kwargs["size_hints"]) if "size_hints" in kwargs else None,
        "reduction_hint": reduction_hint.split(".")[-1] if reduction_hint else None,
        "signature": signature,
        "params": params,
        "constexprs": constexprs,
        "fixed_constexprs": body_constexprs,
        "mutated_args": inductor_meta.get("mutated_arg_names") or [],
        "grid_type": inductor_meta.get("grid_type"),
        "num_load": inductor_meta.get("num_load"),
        "num_store": inductor_meta.get("num_store"),
        "num_reduction": inductor_meta.get("num_reduction"),
        "helper_functions": [f.name for f in fns if f.name != name],
    }


_MASKS = {"xmask": ("xnumel", "XBLOCK"), "ymask": ("ynumel", "YBLOCK"), "r0_mask": ("r0_numel", "R0_BLOCK")}


def _unmasked_numel(fn):
    """{block: count} for the dimensions whose mask the kernel fixes to all True (`xmask =
    tl.full([XBLOCK], True, tl.int1)`) and whose count is a constant: Inductor does that where the
    count is a multiple of every block it uses; a block that does not divide it runs past the end."""
    numel, unmasked = {}, set()
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        target, value = stmt.targets[0].id, stmt.value
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            numel[target] = value.value
        while isinstance(value, ast.Subscript):  # tl.full(...)[:, None]
            value = value.value
        if (target in _MASKS and isinstance(value, ast.Call) and _call_name(value.func) == "tl.full"
                and len(value.args) >= 2 and isinstance(value.args[1], ast.Constant) and value.args[1].value is True):
            unmasked.add(target)
    out = {}
    for mask in unmasked:
        count, block = _MASKS[mask]
        if count in numel:
            out[block] = numel[count]
    return out


_ELEMENT_BYTES = {"fp64": 8, "i64": 8, "u64": 8, "fp32": 4, "i32": 4, "u32": 4, "fp16": 2, "bf16": 2, "i16": 2,
                  "u16": 2, "i8": 1, "u8": 1, "i1": 1, "fp8e4nv": 1, "fp8e5": 1}


def _element_bytes(signature, pointer):
    """The element size of a pointer parameter (`*bf16` -> 2); None when unknown."""
    return _ELEMENT_BYTES.get(str(signature.get(pointer, "")).lstrip("*"))


def _row_run_bytes(fn, signature):
    """For a looped reduction whose rows interleave in memory (a group norm over channels-last data: each
    row's 8 channels of a pixel, then the next row's 8): the bytes of one row that lie together before the
    next row's, i.e. what one program of one row reads contiguously; None where the rows are contiguous or
    the addresses are not of that form. Every load and store whose address moves along the row must read
    the row index through exactly one term `c * col` (col = xindex or xindex % K) and, for c > 1, hold a
    term `r0_index % c`; other terms may read the row only through `xindex // K`. The Tuner uses it to
    prefer programs of several adjacent rows, whose reads then fill whole 128-byte lines."""
    cols, row_mods, other = {"xindex"}, {}, set()
    for node in ast.walk(fn):
        name, v = assign_of(node)
        if name is None:
            continue
        if isinstance(v, ast.Name) and v.id == "xindex" or by_constant(v, "xindex", ast.Mod) is not None:
            cols.add(name)
        elif by_constant(v, "xindex", ast.FloorDiv) is not None:
            pass  # `xindex // K`: a block of rows, which an address may read (it is not the row within one)
        elif by_constant(v, "r0_index", ast.Mod) is not None:
            row_mods[name] = v.right.value
        elif name != "xindex" and names_in(v) & (cols | other):
            other.add(name)  # the row index used some other way (a mask is harmless; an address is not)
    found = []
    for call in streamed(fn, ("tl.load", "tl.store")):
        terms = sum_terms(call.args[0])
        coefficients, mods, pointer = [], set(), None
        for t in terms:
            if isinstance(t, ast.Name) and t.id in signature:
                pointer = t.id
            elif isinstance(t, ast.Name) and t.id in cols:
                coefficients.append(1)
            elif (isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult) and isinstance(t.left, ast.Constant)
                  and isinstance(t.right, ast.Name) and t.right.id in cols):
                coefficients.append(t.left.value)
            elif isinstance(t, ast.Name) and t.id in row_mods:
                mods.add(row_mods[t.id])
            elif names_in(t) & (cols | other):
                return None
        if len(coefficients) != 1 or pointer is None:
            return None
        c = coefficients[0]
        if c > 1 and c not in mods:
            return None  # rows c apart whose own elements are not the c between them
        size = _element_bytes(signature, pointer)
        if size is None:
            return None
        found.append(c * size)
    return min(found) if found else None


def _row_pass_loads(fn, signature):
    """For a looped reduction: {pointer parameter: passes over the row that load it} for each pointer loaded in
    more than one pass (a softmax's input: 2, statistics then normalize), else {}. A row too long to stay in L2
    between its passes is read from memory once a pass, which the bytes a profile counts (each storage once)
    leave out: the profile adds them as the kernel's re-read bytes."""
    passes = {}
    for loop in fn.body:
        if not row_pass(loop):
            continue
        loaded = set()
        for call in ast.walk(loop):
            if isinstance(call, ast.Call) and _call_name(call.func) == "tl.load" and call.args:
                loaded.update(t.id for t in sum_terms(call.args[0])
                              if isinstance(t, ast.Name) and str(signature.get(t.id, "")).startswith("*"))
        for pointer in loaded:
            passes[pointer] = passes.get(pointer, 0) + 1
    return {pointer: n for pointer, n in sorted(passes.items()) if n > 1}


def _call_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _call_name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return None


def _base_buffer(node):
    """The buffer an argument expression refers to (through reinterpret_tensor and views)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and node.args:
        return _base_buffer(node.args[0])
    if isinstance(node, ast.Attribute):
        return _base_buffer(node.value)
    return None


def _tuple_ints(node):
    val = _literal(node)
    if isinstance(val, tuple) and all(isinstance(v, int) for v in val):
        return list(val)
    return None


class _Segments:
    """ast.get_source_segment over one source, its lines split once: the standard function splits the whole
    source on every call, which made parsing a network's call() quadratic (~15 s for a 9-kernel module)."""

    def __init__(self, source):
        self.lines, start = [], 0
        for m in re.finditer(r"\r\n|\r|\n", source):  # the line ends ast counts (not form feeds)
            self.lines.append(source[start:m.end()])
            start = m.end()
        if start < len(source):
            self.lines.append(source[start:])
        self._encoded = {}

    def _line(self, i):
        if i not in self._encoded:
            self._encoded[i] = self.lines[i].encode()
        return self._encoded[i]

    def __call__(self, node):
        """The source text of node, as ast.get_source_segment(source, node) gives it."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1
            col, end_col = node.col_offset, node.end_col_offset
        except AttributeError:
            return None
        if first == last:
            return self._line(first)[col:end_col].decode()
        head, tail = self._line(first)[col:].decode(), self._line(last)[:end_col].decode()
        return "".join([head, *self.lines[first + 1:last], tail])


def _parse_call(fn_node, source, kernel_names):
    """Launches, vendor calls and buffers of the wrapper's call()."""
    launches, vendor_calls, buffers, inputs, outputs = [], [], {}, [], []
    aliases = {}
    segment = _Segments(source)
    order = 0
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            if isinstance(node.value, ast.Name) and node.value.id == "args":
                inputs = [t.id for t in node.targets[0].elts if isinstance(t, ast.Name)]
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Return) and node.value is not None:
            elts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            outputs = [segment(e) for e in elts]
    # buffer reuse: `buf5 = buf4; del buf4  # reuse` makes buf5 another name for buf4's memory
    for node in sorted((n for n in ast.walk(fn_node) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Name)
                and node.value.id.startswith("buf")):
            aliases[node.targets[0].id] = node.value.id
    stmts = sorted((n for n in ast.walk(fn_node) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))
    for call in stmts:
        name = _call_name(call.func)
        if name is None:
            continue
        if name == "assert_size_stride" and len(call.args) >= 3:
            buf = _base_buffer(call.args[0])
            buffers.setdefault(buf, {}).update(
                {"shape": _tuple_ints(call.args[1]), "stride": _tuple_ints(call.args[2]), "origin": "input"})
        elif name.startswith("empty_strided") and len(call.args) >= 3:
            parent = next((p for p in ast.walk(fn_node) if isinstance(p, ast.Assign) and p.value is call), None)
            if parent and isinstance(parent.targets[0], ast.Name):
                dtype = segment(call.args[2])
                buffers[parent.targets[0].id] = {
                    "shape": _tuple_ints(call.args[0]), "stride": _tuple_ints(call.args[1]),
                    "dtype": _SHAPE_DTYPES.get(dtype, dtype), "origin": "alloc",
                    "device": name[len("empty_strided_"):] or "cpu"}
        elif name.endswith(".run") and name[:-4] in kernel_names:
            args = [segment(a) for a in call.args]
            launches.append({"kernel": name[:-4], "order": order, "line": call.lineno,
                             "args": args, "buffers": [_base_buffer(a) for a in call.args],
                             "numels": [_literal(a) for a in call.args if isinstance(_literal(a), int)]})
            order += 1
        elif name.startswith(VENDOR_PREFIXES):
            args = [segment(a) for a in call.args]
            kw = {k.arg: segment(k.value) for k in call.keywords if k.arg}
            vendor_calls.append({"op": name, "order": order, "line": call.lineno, "args": args,
                                 "kwargs": kw, "buffers": [b for b in map(_base_buffer, call.args) if b]
                                 + [_base_buffer(k.value) for k in call.keywords if _base_buffer(k.value)]})
            order += 1
    for name, target in aliases.items():
        while target in aliases:
            target = aliases[target]
        if target in buffers:
            buffers[name] = dict(buffers[target], origin="alias", alias_of=target)
    return launches, vendor_calls, buffers, inputs, outputs


def parse_module(source):
    """The artifact JSON (a dict) of one Inductor output module's source."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ArtifactError(f"output module does not parse: {exc}") from exc
    lines = source.splitlines()
    offs = byte_offsets(source)
    kernels = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        f = node.value.func
        if not (isinstance(f, ast.Attribute) and f.attr == "triton" and _call_name(f.value) == "async_compile"):
            continue
        name = node.targets[0].id
        lit = node.value.args[1]
        if not (isinstance(lit, ast.Constant) and isinstance(lit.value, str)):
            raise ArtifactError(f"kernel {name}: source is not a string literal")
        raw = source.encode("utf-8")
        start = offs[lit.lineno] + lit.col_offset
        end = offs[lit.end_lineno] + lit.end_col_offset
        literal_text = raw[start:end].decode("utf-8")
        quote = literal_text[:3]
        if quote not in ("'''", '"""') or literal_text[3:-3] != lit.value:
            raise ArtifactError(f"kernel {name}: source literal has escapes; cannot splice it safely")
        body_start, body_end = start + 3, end - 3
        info = _kernel_from_source(name, lit.value, body_start)
        info["source_span"] = [body_start, body_end]
        info["source_hash"] = hashlib.sha256(lit.value.encode("utf-8")).hexdigest()
        comments = _comment_block(lines, node.lineno)
        text = "\n".join(comments)
        m = _ATEN_RE.search(text)
        info["aten_ops"] = [s.strip() for s in m.group(1).split(",")] if m else []
        m = _NODES_RE.search(text)
        info["source_nodes"] = [s.strip() for s in m.group(1).split(",")] if m else []
        if "Graph fragment:" in comments:
            frag = comments[comments.index("Graph fragment:") + 1:]
            info["graph_fragment"] = "\n".join(frag)
        else:
            info["graph_fragment"] = ""
        kernels.append(info)
    names = {k["name"] for k in kernels}
    call_fn = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            call_fn = node
            break
    if call_fn is None:
        raise ArtifactError("output module has no call() function")
    launches, vendor_calls, buffers, inputs, outputs = _parse_call(call_fn, source, names)
    # input dtypes are not in assert_size_stride; take them from kernel signatures where launched
    for launch in launches:
        kern = next(k for k in kernels if k["name"] == launch["kernel"])
        for param, buf in zip(kern["params"], launch["buffers"]):
            sig = kern["signature"].get(param, "")
            if buf in buffers and sig.startswith("*") and "dtype" not in buffers[buf]:
                buffers[buf]["dtype"] = _TRITON_DTYPES.get(sig[1:], sig[1:])
    return {
        "source_hash": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "source_bytes": len(source.encode("utf-8")),
        "kernels": kernels,
        "launches": launches,
        "vendor_calls": vendor_calls,
        "buffers": buffers,
        "inputs": inputs,
        "outputs": outputs,
    }


_TRITON_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
                  "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool"}
