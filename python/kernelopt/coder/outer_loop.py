"""The `outer_loop` rewrite family: a 1-D pointwise kernel whose operands indexed by the inner index alone are too
large for L2 walks the outer index inside each program, loading those operands once.

Inductor writes an elementwise op over an outer x inner index space (a layer norm's affine over C x H x W for each
of N samples: `x0 = xindex % P`, `x1 = xindex // P`) as one flat index; each program takes XBLOCK consecutive
elements, so the weight and bias (indexed by x0) are read again for every sample. Where they are larger than L2
(level1/42: two operands of 8M fp32, 64 MB, against a 50 MB L2) every sample re-reads them from memory: the
kernel ran at 53% of the bandwidth its storages allow (bench/results/2026-12-06-suite-survey-h100). Here a program
takes a tile of T inner positions and loops over the N outer indices: the inner-indexed loads are hoisted out of
the loop (read once), the rest of the body runs once per outer index on the tile `xindex = outer * P + inner`.

Coverage: XBLOCK = N * T (the meta this family pins; asserted in the kernel, with P % T == 0), so the launcher's
grid, cdiv(xnumel, XBLOCK) = P / T programs, gives each inner tile exactly one program. Every statement but the
index set-up and the hoisted loads is the original's, in its order, on the same addresses: results are
bit-identical.
"""
import ast

from kernelopt.artifact.exprs import assign_of, by_constant, names_in
from kernelopt.coder.common import NotApplicable, call_name, constexpr_params, kernel_function

# elements of the inner-indexed operands together below which L2 (50 MB on an H100/H200) keeps them between the
# outer indices, so their re-reads cost little: 4M elements = 16 MB at fp32, 8 MB at 16 bits
MIN_REUSED_ELEMENTS = 1 << 22
MAX_TILE = 1024  # inner positions a program loads per outer index (4 KB of fp32 per operand)
MIN_TILE = 128
OUTER = "_ko_outer"
INNER = "_ko_inner"
TILE = "_KO_TILE"
HEAD = [("xoffset", "tl.program_id(0) * XBLOCK"),
        ("xindex", "xoffset + tl.arange(0, XBLOCK)[:]"),
        ("xmask", "tl.full([XBLOCK], True, tl.int1)[:]")]


def _head(fn):
    """(xnumel, index of the first statement after the set-up); declines anything but Inductor's 1-D head with an
    all-True mask (the count is then a multiple of every block)."""
    body = fn.body
    name, value = assign_of(body[0]) if body else (None, None)
    if name != "xnumel" or not (isinstance(value, ast.Constant) and isinstance(value.value, int)):
        raise NotApplicable("no constant `xnumel = <count>` first")
    for i, (want, text) in enumerate(HEAD, start=1):
        name, value = assign_of(body[i]) if i < len(body) else (None, None)
        if name != want or ast.unparse(value) != text:
            raise NotApplicable(f"statement {i + 1} is not `{want} = {text}` (a masked or tiled kernel)")
    return body[0].value.value, len(HEAD) + 1


def _index_names(rest):
    """(full, inner, outer, period): names bound to xindex, xindex % P and xindex // P (one P)."""
    full, inner, outer, periods = {"xindex"}, set(), set(), set()
    for node in rest:
        name, value = assign_of(node)
        if name is None or "xindex" not in names_in(value):
            continue
        if isinstance(value, ast.Name):
            full.add(name)
        elif by_constant(value, "xindex", ast.Mod) is not None:
            inner.add(name)
            periods.add(by_constant(value, "xindex", ast.Mod))
        elif by_constant(value, "xindex", ast.FloorDiv) is not None:
            outer.add(name)
            periods.add(by_constant(value, "xindex", ast.FloorDiv))
        else:
            raise NotApplicable(f"`{ast.unparse(node)}`: the index split other than into xindex % P and xindex // P")
    if len(periods) != 1 or not inner:
        raise NotApplicable("no single inner period P (`xindex % P`) for operands to be shared across the outer index")
    return full, inner, outer, periods.pop()


def _hoistable(node, inner, params):
    """`tmp = tl.load(ptr + <inner index only>, <None or xmask>, <constant keywords>)`: its address reads only the
    inner index names and the kernel's parameters, so it can run before the loop."""
    name, value = assign_of(node)
    if name is None or not (isinstance(value, ast.Call) and call_name(value) == "tl.load" and value.args):
        return False
    reads = names_in(value.args[0])
    if not reads & inner or not reads <= inner | params:
        return False
    if len(value.args) > 2 or not all(isinstance(k.value, ast.Constant) for k in value.keywords):
        return False
    mask = value.args[1] if len(value.args) > 1 else None
    return mask is None or (isinstance(mask, ast.Constant) and mask.value is None) or ast.unparse(mask) == "xmask"


def _tile(period):
    tile = MAX_TILE
    while tile >= MIN_TILE and period % tile:
        tile //= 2
    if tile < MIN_TILE:
        raise NotApplicable(f"the inner period {period} has no power-of-two tile of {MIN_TILE} to {MAX_TILE} dividing it")
    return tile


def outer_loop(source):
    """See the module docstring. Returns (code, meta, notes)."""
    tree, fn = kernel_function(source)
    if constexpr_params(fn) != ["XBLOCK"]:
        raise NotApplicable("not a 1-D pointwise kernel (its constexprs are not just XBLOCK)")
    if any(isinstance(n, (ast.For, ast.While, ast.If, ast.With, ast.Return)) for n in ast.walk(fn) if n is not fn):
        raise NotApplicable("control flow in the kernel")
    if "int64" in source:
        raise NotApplicable("64-bit indices")
    xnumel, start = _head(fn)
    rest = fn.body[start:]
    if "xoffset" in set().union(*(names_in(n) for n in rest)):
        raise NotApplicable("xoffset read after the set-up")
    full, inner, outer, period = _index_names(rest)
    if xnumel % period or xnumel // period < 2:
        raise NotApplicable(f"xnumel {xnumel} is not 2 or more whole periods of {period}")
    if xnumel >= 2 ** 31:
        raise NotApplicable("an index space of 2^31 or more")
    count = xnumel // period
    params = {a.arg for a in fn.args.args}
    hoisted = [n for n in rest if _hoistable(n, inner, params)]
    if not hoisted:
        raise NotApplicable("no load indexed by the inner index alone")
    if len(hoisted) * period < MIN_REUSED_ELEMENTS:
        raise NotApplicable(f"the inner-indexed operands ({len(hoisted)} x {period} elements) fit in L2: their re-reads "
                            "are cheap")
    for call in ast.walk(fn):
        if isinstance(call, ast.Call) and call_name(call) == "tl.store":
            reads = names_in(call.args[0]) if call.args else set()
            if not (reads & full or (reads & inner and reads & outer)):
                raise NotApplicable(f"a store not per element: `{ast.unparse(call.args[0])}`")
    tile = _tile(period)
    index_defs = {id(n) for n in rest if assign_of(n)[0] in (full | inner | outer) - {"xindex"}}
    kept = [n for n in rest if id(n) not in index_defs and not any(n is h for h in hoisted)]

    head = [fn.body[0]] + [ast.parse(s).body[0] for s in (
        f"{TILE}: tl.constexpr = XBLOCK // {count}",
        f"tl.static_assert(XBLOCK == {count} * {TILE})",
        f"tl.static_assert({period} % {TILE} == 0)",
        f"{INNER} = tl.program_id(0) * {TILE} + tl.arange(0, {TILE})[:]",
        f"xmask = tl.full([{TILE}], True, tl.int1)[:]")]
    head += [ast.parse(f"{name} = {INNER}").body[0] for name in sorted(inner)]
    loop_head = [ast.parse(f"xindex = {OUTER} * {period} + {INNER}").body[0]]
    loop_head += [ast.parse(f"{name} = xindex").body[0] for name in sorted(full - {"xindex"})]
    loop_head += [ast.parse(f"{name} = {OUTER}").body[0] for name in sorted(outer)]
    loop = ast.parse(f"for {OUTER} in range({count}):\n    pass").body[0]
    loop.body = loop_head + kept
    fn.body = head + hoisted + [loop]
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    meta = {"XBLOCK": count * tile, "num_warps": 4}
    notes = (f"outer loop: {len(hoisted)} operand(s) of {period} elements indexed by the inner index loaded once per "
             f"program, then {count} outer indices on a tile of {tile}")
    return "@triton.jit\n" + ast.unparse(fn) + "\n", meta, notes
