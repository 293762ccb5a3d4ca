"""The `block_online` rewrite family: an online softmax's running max and sum kept per row, updated a block at a
time, instead of per element.

Inductor's looped reductions over a softmax's row (cross entropy, log-softmax, softmax over long rows:
`prims.prepare_softmax_online`) keep a running max and sum in every lane of an [XBLOCK, R0_BLOCK] tile and
fold each element in with `triton_helpers.online_softmax_combine`: two exps, a maximum and four selects per
element. On a bf16 cross entropy over 50257-wide rows that kernel runs at 32% of the measured bandwidth on an
H200 (bench/results/2026-12-07-survey-level1-h200); the per-element work is the likely bound (not measured).

The rewrite keeps one max and one sum per row ([XBLOCK, 1]) and per block takes the block's max (a NaN-keeping
reduction, triton_helpers.max2), the new running max M, and sum = sum * exp(M_old - M) + sum(exp(x - M)): one
exp per element. Inductor's special cases stay as they were: while a row's max is -inf every element counts 1
(what online_softmax_reduce leaves for an all -inf row), +inf and NaN give NaN sums as before; masked
elements count nothing. The finishing `online_softmax_reduce` is kept as written: on a [XBLOCK, 1] running
pair it returns that pair. Only the order of the sum's additions changes (fp32 rounding; gate 2 judges it).

`lane_online` (the same file) keeps Inductor's per-lane state and masks and replaces only the combine: of its two
scales one is always exp(0) = 1, so one exp per element, and its results are bit for bit the combine's.

block_online applies to each `m_next, s_next = triton_helpers.online_softmax_combine(m, s, x, fast)` in the loop over the
row whose accumulators start as -inf and zeros tiles and are updated by `tl.where(mask, m_next, m)` and
`tl.where(mask, s_next, s)`, their only uses being the combine, those updates and the final reduce. Everything
else in the kernel (other passes, other reductions, stores) is left as written.
"""
import ast

from kernelopt.coder.common import NotApplicable, is_r0_loop, kernel_function

COMBINE = "triton_helpers.online_softmax_combine"
REDUCE = "triton_helpers.online_softmax_reduce"

# one block's update of a row's running max {m} and sum {s}; {x} the block's values, {mask} its live lanes
BLOCK_UPDATE = '''
{p}_x = {masked_x}
{p}_max = triton_helpers.maximum({m}, triton_helpers.max2({p}_x, 1)[:, None])
{p}_all_ninf = {p}_max == float('-inf')
{p}_terms = {masked_terms}
{s} = {s} * tl.where({p}_all_ninf, 1.0, triton_helpers.exp({m} - {p}_max, {fast})) + tl.sum({p}_terms, 1)[:, None]
{m} = {p}_max
'''


def _is_call(node, name):
    return isinstance(node, ast.Call) and ast.unparse(node.func) == name


def _assign_to(stmt, name):
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name)


def _init_tile(stmt, name, fill):
    """`name = tl.full([XBLOCK, R0_BLOCK], -inf, tl.float32)` (fill "-inf") or `tl.zeros([XBLOCK, R0_BLOCK],
    tl.float32)` (fill "0"); returns the statement's shape node to narrow, else None."""
    if not _assign_to(stmt, name):
        return None
    v = stmt.value
    if fill == "-inf" and _is_call(v, "tl.full") and len(v.args) == 3 \
            and ast.unparse(v.args[1]) in ("float('-inf')", 'float("-inf")') and ast.unparse(v.args[2]) == "tl.float32":
        shape = v.args[0]
    elif fill == "0" and _is_call(v, "tl.zeros") and len(v.args) == 2 and ast.unparse(v.args[1]) == "tl.float32":
        shape = v.args[0]
    else:
        return None
    return shape if ast.unparse(shape) == "[XBLOCK, R0_BLOCK]" else None


UNMASKED = ast.Constant(True)  # `acc = nxt`: every lane live (a row that is a whole number of blocks)


def _where_update(stmt, acc, nxt):
    """`acc = tl.where(mask, nxt, acc)`: its mask node; `acc = nxt`: UNMASKED; else None."""
    if _assign_to(stmt, acc) and isinstance(stmt.value, ast.Name) and stmt.value.id == nxt:
        return UNMASKED
    if not _assign_to(stmt, acc) or not _is_call(stmt.value, "tl.where") or len(stmt.value.args) != 3:
        return None
    mask, a, b = stmt.value.args
    if ast.unparse(a) == nxt and ast.unparse(b) == acc:
        return mask
    return None


def _uses(node, name):
    return sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))


def _rewrite_one(fn, loop, i, n):
    """Rewrites the combine at loop.body[i]; returns the number of statements it now takes, else raises."""
    stmt = loop.body[i]
    call = stmt.value
    (m_next, s_next) = [t.id for t in stmt.targets[0].elts]
    m, s, x, fast = call.args
    if not (isinstance(m, ast.Name) and isinstance(s, ast.Name)):
        raise NotApplicable("the combine's accumulators are not plain names")
    m, s = m.id, s.id
    updates = loop.body[i + 1:i + 3]
    masks = [_where_update(updates[0], m, m_next) if updates else None,
             _where_update(updates[1], s, s_next) if len(updates) > 1 else None]
    if any(k is None for k in masks) or ast.dump(masks[0]) != ast.dump(masks[1]):
        raise NotApplicable(f"{m}/{s} are not updated by tl.where(mask, next, acc) under one mask after the combine")
    # the accumulators' only readers: the combine, the two updates and the final reduce
    others = [s2 for s2 in fn.body if s2 is not loop] + [s2 for s2 in loop.body if s2 not in (stmt, *updates)]
    reduce_calls = [c for s2 in fn.body if s2 is not loop for c in ast.walk(s2) if _is_call(c, REDUCE)]
    for acc in (m, s, m_next, s_next):
        read_elsewhere = sum(_uses(s2, acc) for s2 in others)
        read_by_reduce = sum(_uses(c, acc) for c in reduce_calls)
        if read_elsewhere != read_by_reduce:
            raise NotApplicable(f"{acc} is read outside the combine, its updates and the final reduce")
    reduces = [c for c in reduce_calls if [ast.unparse(a) for a in c.args[:2]] == [m, s]]
    if len(reduces) != 1 or ast.unparse(reduces[0].args[2]) != "1":
        raise NotApplicable(f"no single online_softmax_reduce({m}, {s}, 1, ...) after the loop")
    for acc, fill in ((m, "-inf"), (s, "0")):
        shapes = [_init_tile(st, acc, fill) for st in fn.body if _assign_to(st, acc)]
        if len(shapes) != 1 or shapes[0] is None:
            raise NotApplicable(f"{acc} does not start as one {fill} tile of [XBLOCK, R0_BLOCK] in fp32")
        shapes[0].elts[1] = ast.Constant(1)  # one running value per row (a tree given up on is thrown away)
    p, x, fast = f"_bo{n}", ast.unparse(x), ast.unparse(fast)
    terms = f"tl.where({p}_all_ninf, 1.0, triton_helpers.exp({p}_x - {p}_max, {fast}))"
    if masks[0] is UNMASKED:
        masked_x, masked_terms = x, terms
    else:
        mask = ast.unparse(masks[0])
        masked_x, masked_terms = f"tl.where({mask}, {x}, float('-inf'))", f"tl.where({mask}, {terms}, 0.0)"
    body = BLOCK_UPDATE.format(p=p, m=m, s=s, masked_x=masked_x, masked_terms=masked_terms, fast=fast)
    new = ast.parse(body).body
    loop.body[i:i + 3] = new
    return len(new)


# one element folded into a lane's running max {m} and sum {s} with one exp, as online_softmax_combine would:
# of its two scales exp(m - M) and exp(x - M) (M = maximum(m, x)) one is exp(0) = 1 (M - M + 1: NaN where M is
# +inf or NaN, as exp(M - M) is), so only the other is computed; -inf maxima scale by 1, as there. Bit for bit
# the combine's result; the per-lane state, the masks and the final reduce stay Inductor's.
LANE_COMBINE = '''
{p}_max = triton_helpers.maximum({m}, {x})
{p}_x_is_max = {x} >= {m}
{p}_other = triton_helpers.exp(tl.where({p}_x_is_max, {m}, {x}) - {p}_max, {fast})
{p}_one = {p}_max - {p}_max + 1.0
{p}_ninf = {p}_max == float('-inf')
{m_next} = {p}_max
{s_next} = {s} * tl.where({p}_ninf, 1.0, tl.where({p}_x_is_max, {p}_other, {p}_one)) + tl.where({p}_ninf, 1.0, tl.where({p}_x_is_max, {p}_one, {p}_other))
'''


def _lane_one(loop, i, n):
    """Replaces the combine at loop.body[i] by LANE_COMBINE; returns the statements it now takes."""
    stmt = loop.body[i]
    m_next, s_next = [t.id for t in stmt.targets[0].elts]
    m, s, x, fast = (ast.unparse(a) for a in stmt.value.args)
    new = ast.parse(LANE_COMBINE.format(p=f"_lo{n}", m=m, s=s, x=x, fast=fast, m_next=m_next, s_next=s_next)).body
    loop.body[i:i + 1] = new
    return len(new)


def block_online(source):
    """(code, meta, notes) for a looped reduction with online-softmax combines, else NotApplicable."""
    return _online(source, lane=False)


def lane_online(source):
    """(code, meta, notes): each online_softmax_combine in the loop over the row with one exp instead of two,
    bit for bit the same results (per-lane state kept), else NotApplicable."""
    return _online(source, lane=True)


def _online(source, lane):
    tree, fn = kernel_function(source)
    loops = [s for s in fn.body if isinstance(s, ast.For)]
    if not any(is_r0_loop(s) for s in loops):
        raise NotApplicable("not a looped reduction over the row (no r0 loop)")
    rewritten = 0
    for loop in (s for s in loops if is_r0_loop(s)):
        i = 0
        while i < len(loop.body):
            st = loop.body[i]
            if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple)
                    and len(st.targets[0].elts) == 2 and all(isinstance(e, ast.Name) for e in st.targets[0].elts)
                    and _is_call(st.value, COMBINE) and len(st.value.args) == 4):
                i += _lane_one(loop, i, rewritten) if lane else _rewrite_one(fn, loop, i, rewritten)
                rewritten += 1
            else:
                i += 1
    if not rewritten:
        raise NotApplicable("no online_softmax_combine in the loop over the row")
    if any(_is_call(c, COMBINE) for c in ast.walk(fn)):
        raise NotApplicable("an online_softmax_combine outside the loop over the row")
    fn.decorator_list = []
    code = "@triton.jit\n" + ast.unparse(fn) + "\n"
    if lane:
        notes = (f"lane online: {rewritten} online softmax combine(s) with one exp per element instead of two "
                 "(the other scale is exp(0) = 1), bit for bit the same")
    else:
        notes = (f"block online: {rewritten} online softmax(es) with one running max and sum per row, updated a "
                 "block at a time (one exp per element instead of two, no per-element selects)")
    return code, {}, notes
