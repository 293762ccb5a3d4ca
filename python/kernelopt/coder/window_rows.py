"""The `window_rows` rewrite family: pooling windows that overlap along output rows.

Inductor's pooling kernel computes each output from K loads of the same input at constant offsets (a 4x4
max-pool: 16 loads), combined by a chain of `triton_helpers.maximum` (`minimum`, or adds for average
pooling), then an elementwise epilogue and one store. Neighbouring outputs load the same input again: with
a 4x4 window and stride 1 each input element is loaded 16 times. The 3-D max-pool comes as a persistent
reduction over the window (`r0_index` enumerates its 27 elements, `max2` reduces them); it is read as the
same K loads, one per window element, in the window's order.

The rewrite keeps the kernel's name and parameters and has each program walk tiles of outputs: up to
COLUMN_TILE_MAX contiguous outputs of a row (a vector, coalesced along the input rows) by up to ROW_TILE_MAX
output rows, a row at a time. For each row it loads only the window elements the row above did not already
load, and takes the others from the row above's registers: a 4x4 stride-1 window loads 4 of its 16
elements per row (each input element loaded about KW*(TH+KH-1)/TH times instead of KH*KW). Which element
of row o1 + 1 is which element of row o1 is proved from the kernel's own index and mask expressions, read
as affine functions of the output coordinates (window_affine.py): same pointer, same address, same mask,
same `other`. Nothing is assumed about padding, dilation, stride or ceil mode; a kernel whose loads the
reader cannot model is declined with the reason.

The window's elements are combined in the original order, re-bracketed: per group of consecutive elements
(a window row, typically), then the groups in order. Inductor's maximum/minimum (NaN first, otherwise the
last of equal values) are associative, so max/min results are bit-identical; sums are re-associated (within
rounding). Tile shape follows XBLOCK (columns up to COLUMN_TILE_MAX, the rest rows), so whatever XBLOCK the
Tuner picks, the launcher's grid `cdiv(xnumel, XBLOCK)` runs programs that loop over tile ids from
`tl.program_id(0)` in steps of `tl.num_programs(0)`: every output is written exactly once.
"""
import ast
import copy

from kernelopt.coder.common import NotApplicable, call_name as _call_name, constexpr_params as _constexpr_params
from kernelopt.coder.common import int_assign, kernel_function as _function
from kernelopt.coder.window_affine import Digits, Reader, Unreadable
from kernelopt.coder.window_emit import emit

COLUMN_TILE_MAX = 512  # outputs of one row in a program's vector
ROW_TILE_MAX = 16  # output rows one tile walks (unrolled)
ROW_TILE_FIRST = 8  # rows per tile in the XBLOCK the rewrite proposes (the Tuner may change XBLOCK)
UNROLLED_LOADS = 256  # fresh loads one tile's unrolled rows may hold (compile time): fewer rows for wide windows
INT32_END = 2 ** 31

CHAIN_CALLS = ("triton_helpers.maximum", "triton_helpers.minimum")
REDUCE_CALLS = {"triton_helpers.max2": "triton_helpers.maximum", "triton_helpers.min2": "triton_helpers.minimum",
                "tl.sum": "+"}
IDENTITY = {"triton_helpers.maximum": "float('-inf')", "triton_helpers.minimum": "float('inf')", "+": "0"}


class Window:
    """A kernel read as: head (statements the same for every output), pre (per output row, before the
    window's loads), elements (per window element: its statements, the last one its load, in the order
    the reduction combines them), op (a CHAIN_CALLS name or "+"), root (the name the reduction's result
    is assigned to, and how: `root_value` wraps the combined value), post (the epilogue) and the store."""

    def __init__(self, fn, xnumel):
        self.fn, self.xnumel = fn, xnumel
        self.head, self.pre, self.elements, self.post = [], [], [], []
        self.constants = {"xnumel": xnumel}
        self.op = self.root = self.store = None
        self.root_value = lambda value: value
        self.subscript = None  # how xindex is shaped: `[:]` (pointwise) or `[:, None]` (persistent)


def _reads(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _target(node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _same(node, text):
    return ast.dump(node) == ast.dump(ast.parse(text, mode="eval").body)


def _read_header(fn):
    """Checks the pointwise launch form (one program per XBLOCK outputs of a flat index) and the body's
    shape: single-name assignments, each name once, one store at the end. Returns (window, body)."""
    consts = _constexpr_params(fn)
    if consts != ["XBLOCK"]:
        raise NotApplicable(f"not a one-dimensional pointwise kernel (constexpr parameters {consts})")
    body = fn.body
    last = body[-1] if body else None
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and _call_name(n) == "tl.store"]
    if len(stores) != 1 or not (isinstance(last, ast.Expr) and last.value is stores[0]):
        raise NotApplicable(f"not one store at the end of the kernel ({len(stores)} stores)")
    seen = set()
    for node in body[:-1]:
        name = _target(node)
        if name is None:
            raise NotApplicable(f"a statement this family does not read: `{ast.unparse(node).splitlines()[0]}`")
        if name in seen:
            raise NotApplicable(f"{name} is assigned twice")
        seen.add(name)
    xnumel = int_assign(fn.body, "xnumel")
    if xnumel is None:
        raise NotApplicable("the output size is not a compile-time constant (dynamic shape)")
    assigned = {_target(n): n.value for n in body[:-1]}
    if "xoffset" not in assigned or not _same(assigned["xoffset"], "tl.program_id(0) * XBLOCK"):
        raise NotApplicable("the program's outputs are not `tl.program_id(0) * XBLOCK` onwards")
    xindex = assigned.get("xindex")
    if not (isinstance(xindex, ast.BinOp) and isinstance(xindex.op, ast.Add) and _same(xindex.left, "xoffset")
            and isinstance(xindex.right, ast.Subscript) and _same(xindex.right.value, "tl.arange(0, XBLOCK)")):
        raise NotApplicable("xindex is not `xoffset + tl.arange(0, XBLOCK)[...]`")
    if any("xoffset" in _reads(n) for n in body if _target(n) != "xindex"):
        raise NotApplicable("xoffset is read other than by xindex")
    stored = last.value.args[0] if last.value.args else None
    if not (isinstance(stored, ast.BinOp) and isinstance(stored.left, ast.Name)):
        raise NotApplicable("the store's address is not pointer + index")
    for call in ast.walk(fn):
        if isinstance(call, ast.Call) and _call_name(call) == "tl.load" and call.args \
                and stored.left.id in _reads(call.args[0]):
            raise NotApplicable(f"the kernel loads from {stored.left.id}, which it stores to (in place)")
    window = Window(fn, xnumel)
    window.subscript = xindex.right.slice
    window.store = last
    return window, [n for n in body[:-1] if _target(n) not in ("xoffset", "xindex")]


def _chain_op(node):
    """(op, left, right) when node assigns op(left, right) over two names, op a CHAIN_CALLS name or "+"."""
    value = node.value
    if isinstance(value, ast.Call) and _call_name(value) in CHAIN_CALLS and len(value.args) == 2 \
            and not value.keywords:
        op, args = _call_name(value), value.args
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        op, args = "+", [value.left, value.right]
    else:
        return None
    if all(isinstance(a, ast.Name) for a in args):
        return op, args[0].id, args[1].id
    return None


def _read_pointwise(window, body):
    """Elements are the loads a single chain of one op combines (the chain's tree read left to right)."""
    loads = {_target(n): n for n in body if _call_name(n.value) == "tl.load"}
    nodes = {}  # chain node name -> (op, left, right)
    for node in body:
        got = _chain_op(node)
        if got and all(a in loads or nodes.get(a, (None,))[0] == got[0] for a in got[1:]):
            nodes[_target(node)] = got
    used = [a for node in nodes.values() for a in node[1:]]
    roots = [n for n in nodes if n not in used]
    if not roots:
        raise NotApplicable("the loads are not combined by a chain of maximum, minimum or +")
    if len(roots) > 1:
        raise NotApplicable(f"{len(roots)} chains combine loads")
    root = roots[0]
    leaves = _leaves(root, nodes)
    internal = set(_internal(root, nodes))
    by_name = {_target(n): n for n in body}
    for name in leaves + sorted(internal - {root}):
        readers = [n for n in body + [window.store] if name in _reads(n)]
        if len(readers) != 1 or leaves.count(name) > 1:
            raise NotApplicable(f"{name} is read outside the window's reduction")
    window.op, window.root = nodes[root][0], root
    window.elements = [([by_name[leaf]], by_name[leaf].value, leaf) for leaf in leaves]
    _split_rest(window, [n for n in body if _target(n) not in internal and _target(n) not in leaves])


def _leaves(name, nodes):
    if name not in nodes:
        return [name]
    _, left, right = nodes[name]
    return _leaves(left, nodes) + _leaves(right, nodes)


def _internal(name, nodes):
    if name not in nodes:
        return []
    _, left, right = nodes[name]
    return [name] + _internal(left, nodes) + _internal(right, nodes)


def _split_rest(window, rest):
    """The statements outside the window's reduction: post (reads the root, or reads post), pre (per row:
    reads xindex, a load, or reads pre) or head (neither)."""
    post, pre = {window.root}, {"xindex"}
    for node in rest:
        name, reads = _target(node), _reads(node)
        if reads & post:
            post.add(name)
            window.post.append(node)
        elif reads & pre or any(_call_name(c) == "tl.load" for c in ast.walk(node) if isinstance(c, ast.Call)):
            pre.add(name)
            window.pre.append(node)
        else:
            window.head.append(node)
    if not _reads(window.store) & post:
        raise NotApplicable("the store does not write the window's result")


def _read_persistent(window, body):
    """A persistent reduction over the window: `r0_index` enumerates the window's elements, one load reads
    them all, and max2/min2/tl.sum reduces them. Each element becomes its own statements with the r0
    variables replaced by the element's numbers, in r0 order (the reduction's order)."""
    r0_numel = int_assign(window.fn.body, "r0_numel")
    by_name = {_target(n): n for n in body}
    index = by_name.get("r0_index")
    if r0_numel is None or index is None or not _same(index.value, "tl.arange(0, R0_BLOCK)[None, :]"):
        raise NotApplicable("a reduction that is not `r0_index = tl.arange(0, R0_BLOCK)[None, :]` over a constant "
                            "number of elements")
    block = by_name.get("R0_BLOCK")
    if not (isinstance(block, ast.AnnAssign) and isinstance(block.value, ast.Constant)
            and isinstance(block.value.value, int) and block.value.value >= r0_numel):
        raise NotApplicable("R0_BLOCK is not a constant covering the reduction")
    window.constants.update(r0_numel=r0_numel, R0_BLOCK=block.value.value)
    reduces = [n for n in body if _reduce_call(n) is not None]
    if len(reduces) != 1:
        raise NotApplicable("not one reduction over the window")
    varying = {"r0_index"}  # names whose value differs between the window's elements
    for node in body:
        if node is not reduces[0] and _reads(node) & varying:
            varying.add(_target(node))
    loads = [n for n in body if _call_name(n.value) == "tl.load" and _target(n) in varying]
    if len(loads) != 1:
        raise NotApplicable(f"{len(loads)} loads vary over the window; this family reads one")
    pipeline = _pipeline(by_name, reduces[0], _target(loads[0]))
    if block.value.value > r0_numel and not pipeline[2]:
        raise NotApplicable("the lanes past the window are reduced without an identity fill")
    for name in pipeline[1] + [_target(loads[0])]:
        if sum(name in _reads(n) for n in body + [window.store]) != 1:
            raise NotApplicable(f"{name} is read outside the window's reduction")
    numbers = _window_numbers(body, varying, r0_numel)
    per_element = [n for n in body if _target(n) in varying and _target(n) not in numbers[0]
                   and _target(n) not in pipeline[1]]
    if not per_element or per_element[-1] is not loads[0]:
        raise NotApplicable("the window's load is not the last statement of its elements")
    renamed = {_target(n) for n in per_element}
    for k in range(r0_numel):
        stmts = [_Substitute(numbers[k], {name: f"{name}_w{k}" for name in renamed}).visit(copy.deepcopy(n))
                 for n in per_element]
        window.elements.append((stmts, stmts[-1].value, _target(stmts[-1])))
    window.op, window.root = pipeline[0], _target(reduces[0])
    window.root_value = _cast_like(reduces[0].value)
    _split_rest(window, [n for n in body if _target(n) not in varying and n is not reduces[0]])


def _reduce_call(node):
    """The reduction call of `name = <reduce>(v, 1)[:, None]` (optionally `.to(dtype)`), else None."""
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
        value = value.func.value
    if isinstance(value, ast.Subscript) and _call_name(value.value) in REDUCE_CALLS \
            and ast.dump(value.slice) == ast.dump(ast.parse("a[:, None]", mode="eval").body.slice):
        call = value.value
        if len(call.args) == 2 and not call.keywords and _same(call.args[1], "1"):
            return call
    return None


def _pipeline(by_name, reduce_node, load_name):
    """Checks reduce(where(r0_mask, broadcast_to(load), identity)) and returns (op, the pipeline's names,
    whether it fills the lanes past the window with the identity)."""
    call = _reduce_call(reduce_node)
    op = REDUCE_CALLS[_call_name(call)]
    names, filled = [], False
    value = call.args[0]
    while isinstance(value, ast.Name) and value.id != load_name:
        node = by_name.get(value.id)
        names.append(value.id)
        inner = node.value if node is not None else None
        if _call_name(inner) == "tl.where" and len(inner.args) == 3 and _same(inner.args[0], "r0_mask") \
                and _identity_of(inner.args[2]) == op:
            value, filled = inner.args[1], True
        elif _call_name(inner) == "tl.broadcast_to" and inner.args:
            value = inner.args[0]
        else:
            raise NotApplicable(f"`{ast.unparse(node) if node else value.id}` between the window's load and its "
                                "reduction is not a broadcast or an identity fill")
    if not (isinstance(value, ast.Name) and value.id == load_name):
        raise NotApplicable("the reduction does not reduce the window's load")
    return op, names, filled


def _identity_of(node):
    """The op a fill value is the identity of (for where(r0_mask, v, fill)), else None."""
    text = ast.unparse(node).replace('"', "'")
    for op, identity in IDENTITY.items():
        if text in (identity, identity + ".0"):
            return op
    return None


def _cast_like(reduce_value):
    """How the original wraps the reduced value: a trailing `.to(dtype)` is kept."""
    if isinstance(reduce_value, ast.Call) and isinstance(reduce_value.func, ast.Attribute) \
            and reduce_value.func.attr == "to":
        args, keywords = reduce_value.args, reduce_value.keywords
        return lambda value: ast.Call(func=ast.Attribute(value=value, attr="to", ctx=ast.Load()),
                                      args=copy.deepcopy(args), keywords=copy.deepcopy(keywords))
    return lambda value: value


def _window_numbers(body, varying, r0_numel):
    """Per window element k: {name: int or bool} for the r0 variables that are integer functions of
    r0_index alone (r0_index = k, r0_4 = k % 3, r0_mask = k < r0_numel, ...)."""
    out = []
    for k in range(r0_numel):
        env = {"r0_index": k, "r0_numel": r0_numel}
        for node in body:
            name = _target(node)
            if name in varying and name != "r0_index":
                try:
                    env[name] = _evaluate(node.value, env)
                except Unreadable:  # reads more than r0 (an index, a mask): the element's own statement
                    continue
        out.append(env)
    if not out:
        raise NotApplicable("an empty window")
    return out


def _evaluate(node, env):
    """An integer/boolean expression over env's names (r0 arithmetic): + - * // % < & only."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, env)
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        return _INT_OPS[type(node.op)](_evaluate(node.left, env), _evaluate(node.right, env))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt):
        return _evaluate(node.left, env) < _evaluate(node.comparators[0], env)
    raise Unreadable(ast.unparse(node))


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.BitAnd: lambda a, b: a & b}


class _Substitute(ast.NodeTransformer):
    """One window element's copy of a statement: its r0 numbers in place of the r0 variables (folded
    where both sides are numbers, `True & m` is m), its own names for what the element assigns."""

    def __init__(self, numbers, renames):
        self.numbers, self.renames = numbers, renames

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.numbers:
            return ast.Constant(self.numbers[node.id])
        if node.id in self.renames:
            return ast.Name(id=self.renames[node.id], ctx=node.ctx)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) is int:
            return ast.Constant(-node.operand.value)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if isinstance(node.op, ast.BitAnd):
            for a, b in ((left, right), (right, left)):
                if isinstance(a, ast.Constant) and a.value is True:
                    return b
        if isinstance(left, ast.Constant) and isinstance(right, ast.Constant) and type(node.op) in _INT_OPS:
            return ast.Constant(_INT_OPS[type(node.op)](left.value, right.value))
        return node


def read_window(fn):
    window, body = _read_header(fn)
    if any(_target(n) == "r0_index" for n in body):
        _read_persistent(window, body)
    else:
        _read_pointwise(window, body)
    if len(window.elements) < 2:
        raise NotApplicable("fewer than two loads in the window")
    return window


def _element_keys(window, digits):
    """Per element: (its key at output row o1, its key at row o1 + 1), a key being (pointer, address, mask,
    other) with address and mask as affine facts (window_affine)."""
    reader = Reader(digits, window.constants)
    for node in window.head + window.pre:
        reader.bind(_target(node), node.value)
    keys = []
    for stmts, call, _ in window.elements:
        for node in stmts[:-1]:
            reader.bind(_target(node), node.value)
        args = {k.arg: k.value for k in call.keywords}
        ptr = call.args[0]
        mask = call.args[1] if len(call.args) > 1 else args.get("mask")
        other = call.args[2] if len(call.args) > 2 else args.get("other")
        if not (isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) and isinstance(ptr.left, ast.Name)):
            raise NotApplicable(f"the load address `{ast.unparse(ptr)}` is not pointer + index")
        try:
            address, atoms = reader.lin(ptr.right), reader.mask(mask)
        except Unreadable as exc:
            raise NotApplicable(str(exc)) from None
        other_text = ast.unparse(other).replace('"', "'") if other is not None else ""
        here, below = reader.carry_keys(atoms)
        keys.append(((ptr.left.id, address, here, other_text), (ptr.left.id, address.next_row(), below, other_text)))
    return keys


def _groups(carried_from, count):
    """Splits elements 0..count-1 (the reduction's order) into runs such that each run of carried elements
    maps, element by element and in order, onto exactly one run (partition refinement). Returns the
    runs as (start, end) pairs."""
    cuts = {0, count}
    for k in range(1, count):  # a run holds elements alike: all carried with consecutive sources, or all fresh
        a, b = carried_from.get(k - 1), carried_from.get(k)
        if (a is None) != (b is None) or (a is not None and b != a + 1):
            cuts.add(k)
    changed = True
    while changed:
        changed = False
        runs = sorted(cuts)
        for start, end in zip(runs, runs[1:]):
            if start not in carried_from:
                continue
            image = (carried_from[start], carried_from[end - 1] + 1)
            for k in range(start + 1, end):  # a cut inside the image cuts the run too
                if carried_from[k] in cuts and k not in cuts:
                    cuts.add(k)
                    changed = True
            for edge in image:  # the image's edges cut the runs they fall in
                if edge not in cuts:
                    cuts.add(edge)
                    changed = True
    runs = sorted(cuts)
    return list(zip(runs, runs[1:]))


def _pow2_ceil(n):
    return 1 << max(0, (n - 1).bit_length())


def window_rows(source):
    """See the module docstring. Returns (code, meta, notes)."""
    tree, fn = _function(source)
    window = read_window(fn)
    try:
        digits = Digits(fn, window.xnumel)
    except Unreadable as exc:
        raise NotApplicable(str(exc)) from None
    if len(digits.dims) < 2 or digits.dims[1] < 2:
        raise NotApplicable("one output row: no rows to share windows across")
    width, height = digits.dims[0], digits.dims[1]
    keys = _element_keys(window, digits)
    at_row = {key[0]: k for k, key in reversed(list(enumerate(keys)))}
    # element k of row o1 + 1 is element carried_from[k] of row o1 (a load that does not move with the row,
    # a bias say, is no window: it stays a load of every row)
    carried_from = {k: at_row[key[1]] for k, key in enumerate(keys) if at_row.get(key[1], k) != k}
    if not carried_from:
        raise NotApplicable("no window element of an output row is loaded again by the next row (the windows do "
                            "not overlap along rows)")
    runs = _groups(carried_from, len(keys))
    fresh = len(keys) - len(carried_from)
    col_max = min(COLUMN_TILE_MAX, _pow2_ceil(width))
    row_max = max(1, min(ROW_TILE_MAX, height, UNROLLED_LOADS // max(1, fresh)))
    if window.xnumel + ROW_TILE_MAX * width + COLUMN_TILE_MAX >= INT32_END:
        raise NotApplicable("a tile's indices could pass 2**31 (the kernel indexes in 32 bits)")
    fn.body = emit(window, runs, carried_from, (width, height, window.xnumel // (width * height)),
                   (col_max, row_max))
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    rows = 1 << (min(ROW_TILE_FIRST, row_max).bit_length() - 1)
    meta = {"XBLOCK": col_max * rows, "num_warps": max(1, min(8, col_max // 128)), "num_stages": 1}
    notes = (f"window rows: {len(keys)}-element window, {fresh} loaded per output row and {len(carried_from)} taken "
             f"from the row above ({len(runs)} groups), tiles of {col_max} columns by up to {row_max} rows")
    return "@triton.jit\n" + ast.unparse(fn) + "\n", meta, notes
