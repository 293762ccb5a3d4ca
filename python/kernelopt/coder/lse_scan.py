"""The `lse_scan` and `lse_block` rewrite families: a log-cumulative-sum-exp scan without a transcendental in its
combine.

Inductor scans logcumsumexp with `tl.associative_scan` over a log-add-exp combine: every level of the scan
tree computes an exp and a log1p per element (about 2 log2(R0_BLOCK) transcendentals per element), so the
kernel is bound by special-function throughput, not memory (20% of the measured bandwidth on an H100 at
8192 x 32768 fp32, bench/results/2026-12-06-suite-survey-h100).

The rewrite computes the same function from the running maximum M_i (a max scan, cheap) and the sum
s_i = sum_{j<=i} exp(x_j - M_i), which obeys s_i = a_i s_{i-1} + b_i with a_i = exp(M_{i-1} - M_i) and
b_i = exp(x_i - M_i): a linear recurrence, scanned with multiplies and adds only; out_i = M_i + log(s_i).
Three transcendentals per element, none in a combine. Every term is at most 1 and the one at the maximum
is exactly 1, so s_i >= 1: nothing underflows to a wrong -inf, whatever the input's range. The maximum
before i comes from a max scan over the row loaded one element later (an L1/L2 hit, no more DRAM
traffic); a block's last maximum and sum carry into the next block. -inf, +inf and NaN come out as
PyTorch's: an all -inf prefix gives -inf, +inf gives +inf from there on, NaN propagates.

`lse_block` takes each block's maximum as the reference of all its terms instead: a plain cumsum of exp(x - M),
two transcendentals an element and one scan of single values. Its terms can underflow where an element lies far
below its block's later maximum; a block whose partial sums come that near (under 1e-20) is computed lse_scan's
way, so both give the same function on every input (not yet timed on a GPU: the performance gate picks).

Applies to a kernel whose ATen ops are logcumsumexp alone (nothing fused before or after the scan), with
one input and one output at the same index, contiguous along the scanned dimension, computed in fp32.
The gates judge the result like any other candidate.
"""
import ast

from kernelopt.artifact.exprs import row_index_aliases, sum_terms
from kernelopt.coder.common import NotApplicable, is_r0_loop, kernel_function

HELPERS = '''@triton.jit
def _kernelopt_max_keeping_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _kernelopt_scale_then_add(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


'''

# A block of the row, in three parts; {ptr}, {mask}, {out} and {out_mask} are the original's expressions. The
# carry between blocks is (_lse_m, _lse_s): the sum so far is exp(_lse_m) * _lse_s.
LOAD = '''
_lse_x = tl.load({ptr}, {mask}, other=float('-inf')).to(tl.float32)
_lse_last = r0_index == tl.minimum(r0_offset + R0_BLOCK, r0_numel) - 1
'''
# lse_scan's block: the running maximum before each element (a max scan of the row loaded one element later), then
# the multiply-add scan; out: _lse_out, _lse_sum and the carry's next maximum _lse_mn
RUNNING_MAX = '''
_lse_p = tl.load({ptr} - 1, ({mask}) & (r0_index > r0_offset), other=float('-inf')).to(tl.float32)
_lse_e = tl.maximum(tl.associative_scan(_lse_p, 1, _kernelopt_max_keeping_nan), _lse_m, propagate_nan=tl.PropagateNan.ALL)
_lse_mx = tl.maximum(_lse_e, _lse_x, propagate_nan=tl.PropagateNan.ALL)
_lse_a = tl.where(_lse_e == _lse_mx, 1.0, tl.exp(_lse_e - _lse_mx))
_lse_b = tl.where(_lse_x == _lse_mx, 1.0, tl.exp(_lse_x - _lse_mx))
_lse_pa, _lse_pb = tl.associative_scan((_lse_a, _lse_b), 1, _kernelopt_scale_then_add)
_lse_sum = _lse_s * _lse_pa + _lse_pb
_lse_out = _lse_mx + tl.log(_lse_sum)
_lse_mn = tl.sum(tl.where(_lse_last, _lse_mx, 0.0), 1)[:, None]
'''
# lse_block's block: its maximum (NaN left out: a NaN reaches every later sum through the cumsum) is the reference
# of all its terms, s_i = carry * exp(m - M) + cumsum(exp(x - M)) and out_i = M + log(s_i): one scan of single
# values, no max scan. Terms below M underflow only where s_i is tiny: a block with any s_i under 1e-20 (an element
# far below the block's later maximum, -inf first in a row, a +inf later in the block) is computed again the
# running-maximum way ({running_max}), whose terms never underflow
BLOCK_MAX = '''
_lse_bm = tl.max(tl.where(_lse_x != _lse_x, float('-inf'), _lse_x), 1)[:, None]
_lse_mc = tl.maximum(_lse_m, _lse_bm)
_lse_c = tl.where(_lse_m == _lse_mc, 1.0, tl.exp(_lse_m - _lse_mc))
_lse_sum = _lse_s * _lse_c + tl.cumsum(tl.where(_lse_x == _lse_mc, 1.0, tl.exp(_lse_x - _lse_mc)), 1)
_lse_out = _lse_mc + tl.log(_lse_sum)
_lse_mn = _lse_mc
if tl.min(tl.where({mask}, _lse_sum, 1.0)) < 1e-20:
{running_max}
'''
STORE_AND_CARRY = '''
tl.store({out}, _lse_out, {out_mask})
_lse_m = _lse_mn
_lse_s = tl.sum(tl.where(_lse_last, _lse_sum, 0.0), 1)[:, None]
'''
CARRY_INIT = '''
_lse_m = tl.full([XBLOCK, 1], float('-inf'), tl.float32)
_lse_s = tl.zeros([XBLOCK, 1], tl.float32)
'''
PARAMS = ["in_ptr0", "out_ptr0", "xnumel", "r0_numel", "XBLOCK", "R0_BLOCK"]


def _calls(node, name):
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and ast.unparse(n.func) == name]


def _is_setup(stmt):
    """An index computation (xindex, r0_index, r0_1 = r0_index, masks): an assignment to a name that is not
    one of Inductor's values (tmpN) and reads no memory."""
    if not (isinstance(stmt, (ast.Assign, ast.AnnAssign))):
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return (len(names) == len(targets) and not any(n.startswith(("tmp", "_tmp")) for n in names)
            and not _calls(stmt, "tl.load"))


def _pointer_index(call, base):
    """The index expression of `base + (index)`, the first argument of a load or store."""
    ptr = call.args[0] if call.args else None
    if not (isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) and isinstance(ptr.left, ast.Name)
            and ptr.left.id == base):
        raise NotApplicable(f"{ast.unparse(call)[:80]}: not {base} + (index)")
    return ptr.right


def _mask(call, position):
    """The mask of tl.load(ptr, mask, ...) (position 1) or tl.store(ptr, value, mask, ...) (position 2)."""
    kw = {k.arg: k.value for k in call.keywords}
    return call.args[position] if len(call.args) > position else kw.get("mask")


def _check_log_add_exp(tree, scan):
    """The scan's combine function is Inductor's log-add-exp (it calls an exp and a log1p): the ATen ops say
    logcumsumexp, and the code must agree (a cumsum's combine only adds)."""
    combine = ast.unparse(scan.args[2]) if len(scan.args) > 2 else None
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if combine not in fns:
        raise NotApplicable(f"the scan's combine function {combine} is not in the kernel's source")
    called = {ast.unparse(c.func).split(".")[-1] for c in ast.walk(fns[combine]) if isinstance(c, ast.Call)}
    if not {"exp", "log1p"} <= called:
        raise NotApplicable(f"the scan's combine {combine} is not a log-add-exp (it calls {sorted(called)})")


def _scan_parts(source, aten_ops):
    """(fn, loop, setup, expressions) of a logcumsumexp scan kernel this module understands, else NotApplicable:
    expressions = {ptr, mask, out, out_mask}, the original's load and store."""
    ops = sorted(set(aten_ops or []))
    if ops != ["aten.logcumsumexp"]:
        raise NotApplicable(f"not a logcumsumexp alone (ATen ops: {', '.join(ops) or 'unknown'})")
    tree, fn = kernel_function(source, helpers=True)
    params = [a.arg for a in fn.args.args]
    if params != PARAMS:
        raise NotApplicable(f"parameters {params}, expected {PARAMS}")
    loops = [s for s in fn.body if isinstance(s, ast.For)]
    if len(loops) != 1 or not is_r0_loop(loops[0]) or fn.body[-1] is not loops[0]:
        raise NotApplicable("expected one loop over the row, last in the kernel")
    loop = loops[0]
    loads, stores = _calls(loop, "tl.load"), _calls(loop, "tl.store")
    if len(loads) != 1 or len(stores) != 1 or len(_calls(fn, "tl.load")) != 1:
        raise NotApplicable(f"{len(loads)} load(s) and {len(stores)} store(s): expected one of each")
    scans = _calls(loop, "tl.associative_scan")
    if len(scans) != 1:
        raise NotApplicable(f"{len(scans)} associative scans in the loop, expected one")
    _check_log_add_exp(tree, scans[0])
    if not any(ast.unparse(c.func).endswith(".to") and ast.unparse(c.args[0]) == "tl.float32"
               for c in ast.walk(loop) if isinstance(c, ast.Call) and c.args):
        raise NotApplicable("the scan is not computed in fp32")
    load, store = loads[0], stores[0]
    index = _pointer_index(load, "in_ptr0")
    if ast.dump(_pointer_index(store, "out_ptr0")) != ast.dump(index):
        raise NotApplicable("the output is not stored at the input's index")
    setup = [s for s in loop.body if _is_setup(s)]
    if not any(isinstance(t, ast.Name) and t.id in row_index_aliases(fn) for t in sum_terms(index)):
        raise NotApplicable("the scanned dimension is not contiguous (no unit-stride r0 term in the index)")
    mask, out_mask = _mask(load, 1), _mask(store, 2)
    if mask is None or out_mask is None:
        raise NotApplicable("a load or store without a mask")
    return fn, loop, setup, {"ptr": ast.unparse(load.args[0]), "mask": ast.unparse(mask),
                             "out": ast.unparse(store.args[0]), "out_mask": ast.unparse(out_mask)}


def _emit(fn, loop, setup, body):
    """The kernel with its loop's body replaced by body (after the index setup) and the carry initialised."""
    loop.body = setup + ast.parse(body).body
    head = [s for s in fn.body[:-1] if _is_setup(s)]
    fn.body = head + ast.parse(CARRY_INIT).body + [loop]
    fn.decorator_list = []
    return HELPERS + "@triton.jit\n" + ast.unparse(fn) + "\n"


def lse_scan(source, aten_ops):
    """(code, meta, notes) for a logcumsumexp scan kernel, else NotApplicable with the reason."""
    fn, loop, setup, exprs = _scan_parts(source, aten_ops)
    code = _emit(fn, loop, setup, (LOAD + RUNNING_MAX + STORE_AND_CARRY).format(**exprs))
    notes = ("lse scan: logcumsumexp from a running max and a multiply-add scan (3 transcendentals per "
             "element instead of an exp and a log1p at every level of the scan)")
    return code, {}, notes


def lse_block(source, aten_ops):
    """(code, meta, notes) for a logcumsumexp scan kernel, else NotApplicable: lse_scan's function with each
    block's maximum as its reference (a plain cumsum, two transcendentals an element) where that is exact."""
    fn, loop, setup, exprs = _scan_parts(source, aten_ops)
    running_max = "\n".join("    " + line for line in RUNNING_MAX.format(**exprs).strip().splitlines())
    body = LOAD.format(**exprs) + BLOCK_MAX.format(running_max=running_max, **exprs) + STORE_AND_CARRY.format(**exprs)
    code = _emit(fn, loop, setup, body)
    notes = ("lse block: logcumsumexp with each block's maximum as the reference, a plain cumsum of exp(x - max) "
             "(two transcendentals an element, one scan); a block whose partial sums come near underflow takes "
             "lse scan's running maximum instead")
    return code, {}, notes
