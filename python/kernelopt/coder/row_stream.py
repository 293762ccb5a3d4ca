"""The `row_stream` rewrite family: a looped reduction's rows one after another, few programs, so a row's later
passes find it in L2.

Inductor runs a multi-pass reduction over long rows (instance and group norm over large planes, layer norm over
C x H x W, conv + norm epilogues) with one row per program (XBLOCK=1, R0_BLOCK=2048, 16 warps): four programs
an SM, about 500 rows in flight, each read two or three times. At 400 KB a row that is 200 MB in flight against
a 50 MB L2, so every later pass reads the row from memory again; such kernels sat at 58-67% of the measured
bandwidth on an H100 (bench/results/2026-12-06-suite-survey-h100). Here each program takes XBLOCK consecutive
rows and runs the original's passes over one row at a time: with about one program an SM, about 130 rows are in
flight, and the later passes walk each row from its end (the `reverse_pass` family's change, applied first where
it applies), so their re-reads start with what the previous pass read last.

The rewrite keeps the kernel's name, parameters and every computation: the original body runs once per row with
its row tile one row tall (XBLOCK replaced by 1 inside), the row index taken from the loop. XBLOCK stays tunable
(the rows one program takes; the grid is the launcher's cdiv(xnumel, XBLOCK)); the suggested value leaves about
128 programs. The gates judge every result: the performance gate keeps it only where it is faster.
"""
import ast

from kernelopt.artifact.exprs import row_index_aliases, row_pass, streamed, sum_terms
from kernelopt.coder.common import NotApplicable, int_assign as _int_assign, kernel_function as _kernel
from kernelopt.coder.reverse_pass import reverse_pass

ROW = "_ks_row"          # the loop variable: the row of the program's XBLOCK rows being reduced
FIRST = "_ks_first_row"  # the program's first row
PROGRAMS = 128           # about one program an SM on an H100/H200 (132 SMs): the rows in flight fit L2 best
# Measured on an H100 (bench/results/2026-12-06-families-h100, row_kernels.json): with 128 programs, rows of
# 102400 fp32 (400 KB, 51 MB in flight) ran at 109% of Inductor's kernel with R0_BLOCK=4096 and 32 warps (93%
# with Inductor's R0_BLOCK=2048, 16 warps: fewer programs need more loads in flight each); rows of 393216
# (1.5 MB, 190 MB in flight) ran at 23-75%: L2 cannot hold them, and fewer programs starve the memory system.
MAX_ROW = 131072         # elements a row may have (512 KB in fp32): 128 such rows in flight about fill L2
ROW_BLOCK = 4096         # R0_BLOCK proposed: more of the row in flight per program
ROW_WARPS = 32


def _is_xoffset(node):
    """`xoffset = tl.program_id(0) * XBLOCK`, as Inductor writes it."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "xoffset" and ast.unparse(node.value) == "tl.program_id(0) * XBLOCK")


class _OneRow(ast.NodeTransformer):
    """XBLOCK -> 1 everywhere it is read (tile shapes, aranges, masks): the body works on one row."""

    def visit_Name(self, node):
        if node.id == "XBLOCK" and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(1), node)
        return node


def _strided_access(fn):
    """The address of a load or store that moves along the row but never one element at a time (no bare term bound
    to r0_index alone: `4096*r0_1`, a reduction over a middle dim), else None."""
    unit = row_index_aliases(fn)
    for call in streamed(fn, ("tl.load", "tl.store")):
        if not any(isinstance(t, ast.Name) and t.id in unit for t in sum_terms(call.args[0])):
            return ast.unparse(call.args[0])
    return None


def _suggested_xblock(xnumel):
    """Rows a program takes: a power of two dividing xnumel that leaves about PROGRAMS programs (>= 1)."""
    block = 1
    while xnumel % (block * 2) == 0 and xnumel // (block * 2) >= PROGRAMS:
        block *= 2
    return block


def row_stream(source):
    """(code, meta, notes): see the module docstring; source is the kernel as the engine sends it, or the
    reverse_pass family's code."""
    tree, fn = _kernel(source)
    params = [a.arg for a in fn.args.args]
    if "XBLOCK" not in params or "R0_BLOCK" not in params:
        raise NotApplicable("not a looped reduction over rows (no XBLOCK and R0_BLOCK)")
    loops = [n for n in fn.body if row_pass(n)]
    if len(loops) < 2:
        raise NotApplicable("one pass over the row: nothing to find in L2 again")
    xoffsets = [i for i, n in enumerate(fn.body) if _is_xoffset(n)]
    if len(xoffsets) != 1:
        raise NotApplicable("the row index is not `xoffset = tl.program_id(0) * XBLOCK`")
    if any(isinstance(n, ast.Return) for n in ast.walk(fn)):
        raise NotApplicable("the kernel returns early")
    if any(isinstance(n, ast.Call) and ast.unparse(n.func).startswith("tl.atomic") for n in ast.walk(fn)):
        raise NotApplicable("the kernel uses atomics")
    strided = _strided_access(fn)
    if strided is not None:
        # one row at a time over a strided row reads one element a line (level1/47, l1 normalize over the middle
        # dim: 136.6 ms against Inductor's 4.3 ms on an H100, bench/results/2026-12-07-gates-and-tuner-h100)
        raise NotApplicable(f"the row is strided in memory (`{strided}`): rows one after another read an element "
                            "a line")
    if any(isinstance(n, ast.Name) and n.id in (ROW, FIRST) for n in ast.walk(fn)):
        raise NotApplicable(f"the kernel already uses the name {ROW} or {FIRST}")
    xnumel = _int_assign(fn.body, "xnumel")
    if xnumel is None:
        raise NotApplicable("xnumel is not a constant in the kernel")
    r0_numel = _int_assign(fn.body, "r0_numel")
    if r0_numel is None or r0_numel > MAX_ROW:
        raise NotApplicable(f"rows of {r0_numel or 'unknown'} elements: {PROGRAMS} of them in flight do not fit L2 "
                            f"(at most {MAX_ROW}; longer rows measured slower on an H100)")
    at = xoffsets[0]
    head, rows = fn.body[:at], fn.body[at + 1:]
    # the statements before xoffset (sizes) stay as they are; those after run once per row, one row tall
    body = [_OneRow().visit(s) for s in rows]
    first = ast.parse(f"{FIRST} = tl.program_id(0) * XBLOCK").body[0]
    loop = ast.parse(f"for {ROW} in tl.range(0, XBLOCK):\n    xoffset = {FIRST} + {ROW}").body[0]
    loop.body += body
    fn.body = head + [first, loop]
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    block = _suggested_xblock(xnumel)
    notes = (f"row stream: {block} rows a program, one after another ({xnumel // block} programs), so a row's "
             "later passes find it in L2")
    meta = {"XBLOCK": block}
    if r0_numel >= ROW_BLOCK:
        meta.update(R0_BLOCK=ROW_BLOCK, num_warps=ROW_WARPS)
    return "@triton.jit\n" + ast.unparse(fn) + "\n", meta, notes


def row_stream_reversed(source):
    """row_stream over the reverse_pass rewrite where that applies (the later passes walk each row from its
    end), else over the kernel as it is."""
    try:
        code, _, reversed_notes = reverse_pass(source)
    except NotApplicable:
        return row_stream(source)
    code, meta, notes = row_stream(code)
    return code, meta, notes + "; " + reversed_notes
