"""The resident_row family (see coder/rewrite.py): a looped reduction whose row fits on chip becomes one pass,
R0_BLOCK covering the whole row, each loop straight-lined, and a later pass's load of an address an earlier pass
already loaded reusing that value (softmax, log-softmax, norms, losses: 2 or 3 reads of each row become 1). A row
over a strided dimension qualifies when consecutive rows are adjacent in memory (8 to 32 of them a program)."""
import ast

from kernelopt.artifact.exprs import sum_terms
from kernelopt.coder.common import NotApplicable, int_assign, is_r0_loop as _is_r0_loop
from kernelopt.coder.common import assigned_names as _assigned_names, call_name as _call_name
from kernelopt.coder.common import constexpr_params as _constexpr_params, kernel_function as _function


def _int_assign(fn, name):
    """The value of a top-level `name = <int literal>` in the kernel body, else None."""
    return int_assign(fn.body, name)


class _Stability:
    """Which names hold the same value wherever the straight-lined kernel reads them: a name is
    stable when it is never assigned (a parameter, a module global), or every assignment to it is
    a top-level `name = expr` with the same expr over stable names."""

    def __init__(self, body):
        self.rhs = {}
        self.unstable = set()
        for node in body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                text = ast.dump(node.value)
                if self.rhs.setdefault(name, (text, node.value))[0] != text:
                    self.unstable.add(name)
                continue
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                name = node.target.id
                text = ast.dump(node.value)
                if self.rhs.setdefault(name, (text, node.value))[0] != text:
                    self.unstable.add(name)
                continue
            self.unstable.update(_assigned_names(node))  # tuple targets, nested blocks: not tracked
        self._memo = {}

    def stable(self, name, depth=0):
        if name in self._memo:
            return self._memo[name]
        if name in self.unstable or depth > 50:
            return False
        self._memo[name] = False  # a cycle reads as unstable
        ok = name not in self.rhs or all(
            self.stable(n.id, depth + 1) for n in ast.walk(self.rhs[name][1]) if isinstance(n, ast.Name))
        self._memo[name] = ok
        return ok


def _load_key(call):
    """What makes two tl.load calls read the same values: pointer, mask and `other` (the
    eviction policy is only a cache hint). None for loads this pass does not reuse."""
    if _call_name(call) != "tl.load" or not call.args:
        return None
    kw = {k.arg: k.value for k in call.keywords}
    if set(kw) - {"mask", "other", "eviction_policy", "cache_modifier"}:
        return None
    ptr = call.args[0]
    mask = call.args[1] if len(call.args) > 1 else kw.get("mask")
    other = call.args[2] if len(call.args) > 2 else kw.get("other")
    if len(call.args) > 3:
        return None
    return tuple(ast.dump(x) if x is not None else "" for x in (ptr, mask, other)), (ptr, mask, other)


def _writes_memory(node):
    for sub in ast.walk(node):
        name = _call_name(sub)
        if name and (name == "tl.store" or name.startswith("tl.atomic") or name.endswith(".store")):
            return True
    return False


def _assign_index(body):
    """name -> indices of the top-level statements that assign it (any target form)."""
    out = {}
    for i, node in enumerate(body):
        for name in _assigned_names(node):
            out.setdefault(name, []).append(i)
    return out


def _is_init(node, value):
    """`tl.full(shape, value, dtype)`, or `tl.zeros(shape, dtype)` when value is "0"."""
    name = _call_name(node)
    if name == "tl.zeros":
        return value == "0"
    if name == "tl.full" and len(node.args) >= 2:
        text = ast.unparse(node.args[1])
        return text == value or (value == "0" and text == "0.0")
    return False


def _rhs_of(body, index, name):
    node = body[index]
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and node.targets[0].id == name:
        return node.value
    return None


def _first_use_holds_init(body, at, acc, init_value):
    """acc is assigned once before statement `at`, to its initial value, and not read in between."""
    where = [i for i in _assign_index(body).get(acc, []) if i < at]
    if len(where) != 1 or not _is_init(_rhs_of(body, where[0], acc), init_value):
        return False
    return not any(isinstance(n, ast.Name) and n.id == acc for node in body[where[0] + 1:at] for n in ast.walk(node))


def _simplify_online_softmax(body):
    """`mx_next, sm_next = online_softmax_combine(mx, sm, v, fast)` where mx and sm still hold
    -inf and 0 is, elementwise, mx_next = v and sm_next = 1 (NaN where v is NaN or +inf, as
    exp(v - v) gives there): the two exps per element of the incremental form go away; the
    row's max and sum are still taken by online_softmax_reduce."""
    done = 0
    for i, node in enumerate(body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and _call_name(node.value) == "triton_helpers.online_softmax_combine"):
            continue
        outs = node.targets[0].elts
        args = node.value.args
        if len(outs) != 2 or len(args) != 4 or not all(isinstance(x, ast.Name) for x in outs + args[:2]):
            continue
        if not (_first_use_holds_init(body, i, args[0].id, "float('-inf')")
                and _first_use_holds_init(body, i, args[1].id, "0")):
            continue
        v = ast.unparse(args[2])
        new = ast.parse(f"{outs[0].id} = {v}\n"
                        f"{outs[1].id} = tl.where(({v} == {v}) & ({v} != float('inf')), 1.0, float('nan'))").body
        body[i:i + 1] = new
        done += 1
    return [f"{done} online-softmax combine(s) taken directly"] if done else []


def _simplify_welford(body):
    """`mean, m2, weight = welford(acc_mean, acc_m2, acc_weight, 1)` after a single
    first-iteration welford_reduce (each element its own mean, m2 = 0, weight 1 where the row
    mask holds, 0 elsewhere): the row's mean, m2 and count become two plain sums over the
    resident row (mean, then squared deviations), instead of a tree of Welford combines."""
    done = 0
    index = _assign_index(body)
    for i, node in enumerate(body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and _call_name(node.value) == "triton_helpers.welford"):
            continue
        outs, args = node.targets[0].elts, node.value.args
        if len(outs) != 3 or len(args) != 4 or not all(isinstance(x, ast.Name) for x in outs + args[:3]):
            continue
        if ast.unparse(args[3]) != "1":
            continue
        accs = [a.id for a in args[:3]]
        # each accumulator: init to 0, then exactly one `acc = tl.where(mask, acc_next, acc)`
        # after one welford_reduce(..., first iteration) producing the three *_next names
        reduce_at = [j for j in range(i) if isinstance(body[j], ast.Assign)
                     and _call_name(body[j].value) == "triton_helpers.welford_reduce"]
        if len(reduce_at) != 1:
            continue
        red = body[reduce_at[0]]
        if not (isinstance(red.targets[0], ast.Tuple) and len(red.value.args) == 5
                and [ast.unparse(a) for a in red.value.args[1:4]] == accs
                and ast.unparse(red.value.args[4]) in ("roffset == 0", "r0_offset == 0")):
            continue
        nexts = [t.id for t in red.targets[0].elts if isinstance(t, ast.Name)]
        ok = len(nexts) == 3
        masks = set()
        for acc, nxt in zip(accs, nexts if ok else []):
            where = index.get(acc, [])
            ok = ok and len(where) == 2 and where[0] < reduce_at[0] < where[1] < i
            ok = ok and _is_init(_rhs_of(body, where[0], acc), "0")
            upd = _rhs_of(body, where[1], acc) if ok else None
            ok = ok and upd is not None and _call_name(upd) == "tl.where" and len(upd.args) == 3 \
                and ast.unparse(upd.args[1]) == nxt and ast.unparse(upd.args[2]) == acc
            if ok:
                masks.add(ast.unparse(upd.args[0]))
        if not ok or len(masks) != 1 or any(index.get(o.id, [i]) != [i] for o in outs):
            continue
        mean_acc, _, weight_acc = accs
        mean, m2, weight = (o.id for o in outs)
        new = ast.parse(
            f"{weight} = tl.sum({weight_acc}, 1)\n"
            f"{mean} = tl.sum({mean_acc}, 1) / {weight}\n"
            f"{m2} = tl.sum(tl.where({weight_acc} > 0, ({mean_acc} - {mean}[:, None]) * ({mean_acc} - {mean}[:, None]), 0.0), 1)"
        ).body
        body[i:i + 1] = new
        done += 1
        index = _assign_index(body)
    return [f"{done} Welford reduction(s) as two sums over the row"] if done else []


ELEMENTS_PER_PROGRAM = 4096  # short rows share a program up to this many elements
MIN_PROGRAMS = 512  # ...while leaving at least this many programs (several per SM) to fill the GPU


def _power_of_two_dividing(limit, *counts):
    """The largest power of two <= limit dividing every non-zero count (0 when limit < 1). A row count
    it divides leaves no partial last program: Inductor drops xmask (all True) where none occurs."""
    xblock = 1 << (limit.bit_length() - 1) if limit >= 1 else 0
    while xblock > 1 and any(c and c % xblock for c in counts):
        xblock //= 2
    return xblock


def _rows_per_program(block, xnumel):
    """Rows one program of the resident rewrite takes (its first XBLOCK; the Tuner may change it):
    one for rows of ELEMENTS_PER_PROGRAM or more, else as many as fit, a power of two dividing the
    row count, while at least MIN_PROGRAMS programs remain (a dynamic row count: one)."""
    if not xnumel or block >= ELEMENTS_PER_PROGRAM:
        return 1
    return _power_of_two_dividing(min(ELEMENTS_PER_PROGRAM // block, max(1, xnumel // MIN_PROGRAMS)), xnumel)


SECTOR_COLUMNS = 8  # a strided row's program takes at least this many columns: 8 fp32 fill a 32-byte sector
STRIDED_TILE = 16384  # elements (row x columns) one program of a strided-row rewrite keeps on chip


def _adjacent_columns(fn):
    """For a row that is not contiguous (the reduction runs over a strided dimension): the period K
    such that rows xindex and xindex+1 sit at adjacent addresses in every load and store whenever
    both lie in one run of K (xnumel when there is no period). Each address must be a sum with
    exactly one bare term `c` where `c = xindex` or `c = xindex % K`, and any other term that
    reads xindex does so only through names `b = xindex // K` (constant within a run). Else
    NotApplicable: a program of several rows would then read each row's elements apart."""
    kinds = {"xindex": ("column", None)}  # name -> ("column", K) | ("run", None) | ("other", None)
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & kinds.keys()
        if not reads:
            continue
        if name in kinds:
            if name != "xindex":
                kinds[name] = ("other", None)  # assigned twice from rows: no single meaning
            continue
        is_x = isinstance(value, ast.Name) and value.id == "xindex"
        mod = (isinstance(value, ast.BinOp) and isinstance(value.left, ast.Name) and value.left.id == "xindex"
               and isinstance(value.right, ast.Constant) and isinstance(value.right.value, int))
        if is_x:
            kinds[name] = ("column", None)
        elif mod and isinstance(value.op, ast.Mod):
            kinds[name] = ("column", value.right.value)
        elif mod and isinstance(value.op, ast.FloorDiv):
            kinds[name] = ("run", None)
        else:
            kinds[name] = ("other", None)
    periods = []
    for call in ast.walk(fn):
        if not (isinstance(call, ast.Call) and _call_name(call) in ("tl.load", "tl.store") and call.args):
            continue
        columns, reads_rows, mixed = 0, False, False
        for term in sum_terms(call.args[0]):
            names = {n.id for n in ast.walk(term) if isinstance(n, ast.Name)} & kinds.keys()
            reads_rows |= bool(names)
            if isinstance(term, ast.Name) and kinds.get(term.id, ("",))[0] == "column":
                columns += 1
                periods.append(kinds[term.id][1])
            else:  # a term reading rows other than through a run (xindex // K) moves with the row
                mixed |= any(kinds[n][0] != "run" for n in names)
        # one bare column term; none while rows are read: every row reads the same address
        if mixed or columns > 1 or (columns == 0 and reads_rows):
            raise NotApplicable(f"the row is not contiguous and consecutive rows are not adjacent in "
                                f"`{ast.unparse(call.args[0])}`")
    known = [p for p in periods if p is not None]
    return min(known) if known else None


def _columns_per_program(block, xnumel, period, max_row):
    """Rows (columns of a strided row) one program of the strided resident rewrite takes: a power of
    two of at least SECTOR_COLUMNS and at most 32, with block x columns <= STRIDED_TILE, dividing
    xnumel and the period of adjacent columns; where STRIDED_TILE leaves fewer than SECTOR_COLUMNS,
    exactly SECTOR_COLUMNS if they hold at most max_row elements (the contiguous rows' limit: a
    4096-long column reduction, level1/47, 65% of the bandwidth in two passes); NotApplicable when
    none is."""
    xblock = _power_of_two_dividing(min(32, STRIDED_TILE // block, xnumel or 32), xnumel, period)
    if xblock < SECTOR_COLUMNS and SECTOR_COLUMNS * block <= max_row:
        xblock = _power_of_two_dividing(SECTOR_COLUMNS, xnumel, period)
    if xblock < SECTOR_COLUMNS:
        raise NotApplicable(f"the row is not contiguous, and a block of {block} leaves no {SECTOR_COLUMNS} or more "
                            f"adjacent columns per program (at most {max(STRIDED_TILE, max_row)} elements on chip)")
    return xblock


def _resident_rows(fn, max_row):
    """(row length, indices of the loops over the row) of a kernel the rewrite applies to; NotApplicable
    says why not."""
    consts = _constexpr_params(fn)
    if "R0_BLOCK" not in consts:
        raise NotApplicable("not a looped reduction over one dimension (no R0_BLOCK)")
    if any(c.startswith("R1_") for c in consts):
        raise NotApplicable("reduces over two dimensions (R1_BLOCK)")
    rows = _int_assign(fn, "r0_numel")
    if rows is None:
        raise NotApplicable("the row length is not a compile-time constant (dynamic shape)")
    if rows > max_row:
        raise NotApplicable(f"a row of {rows} elements does not fit on chip (limit {max_row})")
    loops = [i for i, n in enumerate(fn.body) if _is_r0_loop(n)]
    if not loops:
        raise NotApplicable("no loop over the row")
    for node in fn.body:
        if not _is_r0_loop(node) and any(_is_r0_loop(s) for s in ast.walk(node) if s is not node):
            raise NotApplicable("a loop over the row is nested in other control flow")
    for i in loops:
        if any(isinstance(s, (ast.Break, ast.Continue, ast.Return)) for s in ast.walk(fn.body[i])):
            raise NotApplicable("a loop over the row has break/continue/return")
    return rows, loops


def _straight_line(fn, rows):
    """The body with every pass straight-lined: r0_offset = 0, then the loop's body; R0_BLOCK asserted to
    hold the row."""
    body = []
    where = next(i for i, n in enumerate(fn.body) if isinstance(n, ast.Assign) and
                 isinstance(n.targets[0], ast.Name) and n.targets[0].id == "r0_numel")
    for i, node in enumerate(fn.body):
        if _is_r0_loop(node):
            body.append(ast.parse("r0_offset = 0").body[0])
            body.extend(node.body)
        else:
            body.append(node)
        if i == where:
            body.append(ast.parse(f"tl.static_assert(R0_BLOCK >= {rows})").body[0])
    return body


def _reuse_loads(body):
    """A later load of what an earlier load already read reuses its value (in place); returns how many."""
    stability = _Stability(body)
    assigned_once = {}
    for name in _assigned_names(ast.Module(body=body, type_ignores=[])):
        assigned_once[name] = assigned_once.get(name, 0) + 1
    seen = {}
    reused = 0
    for node in body:
        if _writes_memory(node):
            seen.clear()  # a store may change what a load would read
            continue
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        got = _load_key(node.value) if isinstance(node.value, ast.Call) else None
        if got is None:
            continue
        key, parts = got
        names = [n.id for p in parts if p is not None for n in ast.walk(p) if isinstance(n, ast.Name)]
        if not all(stability.stable(n) for n in names):
            continue
        target = node.targets[0].id
        if key in seen:
            node.value = ast.Name(id=seen[key], ctx=ast.Load())
            reused += 1
        elif assigned_once.get(target) == 1:
            seen[key] = target
    return reused


def resident_row(source, max_row=32768, reduction_hint=None):
    """See the module docstring. Returns (code, meta, notes). reduction_hint is Inductor's
    (INNER: the row is contiguous); None skips that check (a caller that knows the layout). Any
    other hint: the reduction runs over a strided dimension, and the rewrite applies only where
    consecutive rows are adjacent in memory, so that a program taking several rows (columns)
    reads whole sectors (_adjacent_columns, _columns_per_program)."""
    tree, fn = _function(source)
    strided = reduction_hint is not None and reduction_hint != "INNER"
    period = _adjacent_columns(fn) if strided else None
    rows, loops = _resident_rows(fn, max_row)
    body = _straight_line(fn, rows)  # 1. every pass straight-lined
    reused = _reuse_loads(body)  # 2. a repeated load reuses the earlier one's value
    # 3. reductions the helpers did incrementally, done on the resident row directly
    simplified = _simplify_online_softmax(body) + _simplify_welford(body)
    fn.body = body
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    block = 1 << max(0, (rows - 1).bit_length())
    if strided:
        xblock = _columns_per_program(block, _int_assign(fn, "xnumel"), period, max_row)
    else:
        xblock = _rows_per_program(block, _int_assign(fn, "xnumel"))
    warps = min(32, max(4, xblock * block // 512))
    meta = {"XBLOCK": xblock, "R0_BLOCK": block, "num_warps": warps, "num_stages": 1}
    passes = len(loops)
    notes = (f"resident row: {passes} pass(es) over a {rows}-element row in one R0_BLOCK={block} block"
             + (f" ({xblock} adjacent strided rows per program)" if strided
                else f" ({xblock} rows per program)" if xblock > 1 else "") + ", "
             f"{reused} repeated load(s) reused")
    if simplified:
        notes += ", " + ", ".join(simplified)
    if passes < 2 and reused == 0 and not simplified:
        notes += " (one pass already: only the loop is gone)"
    return "@triton.jit\n" + ast.unparse(fn) + "\n", meta, notes
