"""The kernel body the `window_rows` family writes (window_rows.py says what and why).

    xnumel = ...                                    # the original's head: statements alike for every output
    wr_cols: tl.constexpr = min(XBLOCK, C)          # a tile: wr_cols outputs of a row (a vector) ...
    wr_rows: tl.constexpr = min(XBLOCK // wr_cols, R)   # ... by wr_rows output rows
    for wr_tile in range(tl.program_id(0), <tiles>, tl.num_programs(0)):
        wr_col, wr_row0, wr_base = <the tile's columns, first row, plane>
        for wr_t in tl.static_range(wr_rows):
            xindex = <the flat output index of row wr_row0 + wr_t>; wr_valid = <inside the output>
            <the original's per-row statements: index variables, padding masks>
            if wr_t == 0: <load the carried groups>  else: <take them from the row above>
            <load the fresh groups>; <root> = <the groups combined in order>
            <the original's epilogue>; <its store, masked by wr_valid>
            <keep the groups the next row takes>

Every load and the store get `& wr_valid`: a lane past the output's edge (a partial tile) is neither read
nor written. (wr_valid tests the row as `wr_row * W + wr_col < H * W`, a vector like the column test: the
interpreter mis-types `vector & scalar` masks.) XBLOCK in the original's statements (a vector's length) becomes wr_cols.
"""
import ast
import copy


def _parse(text):
    return ast.parse(text).body


def _prefix(fn):
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    prefix = "wr_"
    while any(n.startswith(prefix) for n in names):
        prefix = "w" + prefix
    return prefix


class _Rewrite(ast.NodeTransformer):
    """XBLOCK -> the tile's column count; every tl.load and tl.store masked by the tile's valid lanes."""

    def __init__(self, cols, valid):
        self.cols, self.valid = cols, valid

    def visit_Name(self, node):
        if node.id == "XBLOCK":
            return ast.Name(id=self.cols, ctx=node.ctx)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        name = ast.unparse(node.func)
        if name not in ("tl.load", "tl.store"):
            return node
        position = 1 if name == "tl.load" else 2
        valid = ast.Name(id=self.valid, ctx=ast.Load())
        for kw in node.keywords:
            if kw.arg == "mask":
                kw.value = _and(kw.value, valid)
                return node
        if len(node.args) > position:
            node.args[position] = _and(node.args[position], valid)
        elif len(node.args) == position:
            node.args.append(valid)
        else:
            node.keywords.append(ast.keyword(arg="mask", value=valid))
        return node


def _and(mask, valid):
    if isinstance(mask, ast.Constant) and mask.value is None:
        return valid
    return ast.BinOp(left=mask, op=ast.BitAnd(), right=valid)


def _combine(op, names):
    """names combined left to right: op(op(a, b), c) ... (op a call name, or "+")."""
    value = ast.Name(id=names[0], ctx=ast.Load())
    for name in names[1:]:
        right = ast.Name(id=name, ctx=ast.Load())
        if op == "+":
            value = ast.BinOp(left=value, op=ast.Add(), right=right)
        else:
            value = ast.Call(func=ast.parse(op, mode="eval").body, args=[value, right], keywords=[])
    return value


def _assign(name, value):
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)


def _group_code(window, runs, group, p, rewrite):
    """The statements that load one group's elements and combine them into {p}g{group}."""
    start, end = runs[group]
    out = []
    for stmts, _, _ in window.elements[start:end]:
        out += [rewrite.visit(copy.deepcopy(s)) for s in stmts]
    names = [target for _, _, target in window.elements[start:end]]
    out.append(_assign(f"{p}g{group}", _combine(window.op, names)))
    return out


def emit(window, runs, carried_from, shape, tile_max):
    """The new body. runs: the element groups (start, end) in order; carried_from: element -> the element
    of the row above it equals; shape: (width, height, planes) of the output; tile_max: (C, R) above."""
    width, height, planes = shape
    col_max, row_max = tile_max
    p = _prefix(window.fn)
    rewrite = _Rewrite(f"{p}cols", f"{p}valid")
    group_of = {start: g for g, (start, _) in enumerate(runs)}
    carried = {g: group_of[carried_from[start]] for g, (start, _) in enumerate(runs) if start in carried_from}
    body = [rewrite.visit(copy.deepcopy(n)) for n in window.head]
    body[:0] = _parse(f"{p}cols: tl.constexpr = XBLOCK if XBLOCK < {col_max} else {col_max}\n"
                      f"{p}rows: tl.constexpr = XBLOCK // {p}cols if XBLOCK // {p}cols < {row_max} else {row_max}\n"
                      f"{p}col_tiles = ({width} + {p}cols - 1) // {p}cols\n"
                      f"{p}row_tiles = ({height} + {p}rows - 1) // {p}rows")
    row = _parse(f"{p}row = {p}row0 + {p}t\n"
                 f"{p}valid = ({p}col < {width}) & ({p}row * {width} + {p}col < {width * height})\n"
                 f"xindex = {p}base + {p}row * {width} + {p}col")
    row += [rewrite.visit(copy.deepcopy(n)) for n in window.pre]
    if carried:
        first = ast.If(test=ast.parse(f"{p}t == 0", mode="eval").body, body=[], orelse=[])
        for g in sorted(carried):
            first.body += _group_code(window, runs, g, p, rewrite)
            first.orelse += _parse(f"{p}g{g} = {p}c{g}")
        row.append(first)
    for g in range(len(runs)):
        if g not in carried:
            row += _group_code(window, runs, g, p, rewrite)
    row.append(_assign(window.root, window.root_value(_combine(window.op, [f"{p}g{g}" for g in range(len(runs))]))))
    row += [rewrite.visit(copy.deepcopy(n)) for n in window.post + [window.store]]
    for g in sorted(carried):
        row += _parse(f"{p}c{g} = {p}g{carried[g]}")
    tile = _parse(f"{p}col = {p}tile % {p}col_tiles * {p}cols + tl.arange(0, {p}cols)\n"
                  f"{p}row0 = {p}tile // {p}col_tiles % {p}row_tiles * {p}rows\n"
                  f"{p}base = {p}tile // ({p}col_tiles * {p}row_tiles) * {width * height}\n"
                  f"for {p}t in tl.static_range({p}rows):\n    pass")
    tile[0].value.right = ast.Subscript(value=tile[0].value.right, slice=copy.deepcopy(window.subscript),
                                        ctx=ast.Load())  # shaped as the original's xindex
    tile[-1].body = row
    loop = _parse(f"for {p}tile in range(tl.program_id(0), {planes} * {p}row_tiles * {p}col_tiles, "
                  f"tl.num_programs(0)):\n    pass")[0]
    loop.body = tile
    return body + [loop]
