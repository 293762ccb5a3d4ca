"""Structural rewrites of Inductor's Triton kernels: the offline Coder's rewrite library.

Each family takes one generated kernel (its `@triton.jit` function text) and returns a rewritten
function with the same name and parameters, plus the launch meta-parameters it needs, or the
reason it does not apply. The engine decides which families to ask for and sends every
rewrite through the four gates like any other candidate; nothing here is trusted.

Sources are transformed with Python's `ast` (never with text patterns), so a rewrite either
understands the whole kernel it changes or declines it.

Families:
  resident_row  (resident_row.py) A looped reduction (`triton_red_*`: one or more `for r0_offset in range(0,
                r0_numel, R0_BLOCK)` passes over each row) whose row fits on chip becomes one
                pass: R0_BLOCK covers the whole row, each loop runs exactly once and is
                straight-lined, and a later pass's load of an address an earlier pass already
                loaded reuses that value instead of reading memory again (softmax, log-softmax,
                norms, losses: typically 2 or 3 reads of each row become 1). A
                `tl.static_assert(R0_BLOCK >= r0_numel)` keeps a later tuner from shrinking the
                block under the rewrite. A row over a strided dimension (softmax over the middle
                dimension) qualifies when consecutive rows are adjacent in memory: a program then
                takes 8 to 32 of them, so each load of one row position reads whole sectors.
  reverse_pass  (reverse_pass.py) A looped reduction with two or more passes over each row, for rows too long to
                keep on chip: a later pass that carries nothing from one block to the next (the
                pass that normalizes and stores) walks the row from its end, so it first
                re-reads the blocks the previous pass read last, while they are still in L2,
                instead of the row's start, which the other programs' traffic has evicted
                (long-row softmax, instance/group norm over large extents). Block sizes stay
                tunable; nothing is pinned.
  row_stream    A multi-pass looped reduction's rows one after another, XBLOCK of them in a program, about
                one program an SM (coder/row_stream.py), with reverse_pass's change where it applies: the
                rows in flight fit L2, so the later passes re-read each row from L2, not memory.
  lse_scan      A logcumsumexp scan (coder/lse_scan.py): from a running max and a multiply-add scan
                instead of a log-add-exp combine at every level of the scan tree.
  lse_block     The same scan with each block's maximum as its reference (coder/lse_scan.py): a plain cumsum of
                exp(x - max), no max scan; a block whose partial sums near underflow takes lse_scan's way.
  window_rows   A pooling kernel whose windows overlap along output rows (window_rows.py): tiles of
                outputs walked a row at a time, each row loading only the window rows the row above
                did not (a 4x4 stride-1 max-pool: 4 of its 16 loads per output).
  channel_copy  The NCHW -> channels-last copy before a convolution with C = 3 (to 8, not a power of two)
                channels (channel_copy.py): the channel as the tile's last axis, so each warp's store is contiguous.
  block_online  An online softmax's running max and sum (cross entropy, softmax and log-softmax over long rows)
                kept per row and updated a block at a time (block_online.py): one exp per element, not two.
  lane_online   The same kernels with Inductor's per-lane state kept and one exp per combine instead of two (the
                other scale is exp(0) = 1): bit for bit the original's results (block_online.py).
  outer_loop    A pointwise kernel over outer x inner indices whose inner-indexed operands exceed L2 (a layer norm's
                affine over C x H x W, outer_loop.py): each program loops over the outer index, those loads once.
"""
from kernelopt.coder.block_online import block_online, lane_online
from kernelopt.coder.channel_copy import channel_copy
from kernelopt.coder.common import NotApplicable  # noqa: F401 (callers import it from here)
from kernelopt.coder.lse_scan import lse_block, lse_scan
from kernelopt.coder.outer_loop import outer_loop
from kernelopt.coder.resident_row import resident_row
from kernelopt.coder.reverse_pass import reverse_pass
from kernelopt.coder.row_stream import row_stream_reversed
from kernelopt.coder.window_rows import window_rows

FAMILIES = ("resident_row", "reverse_pass", "row_stream", "lse_scan", "lse_block", "window_rows", "channel_copy", "outer_loop",
            "block_online", "lane_online")


# the online-softmax families, and those that change a kernel's other passes, tried again on their output: the
# first pass with half the exps, the second pass's re-read of each row from memory is what is left (long-row softmax)
ONLINE = ("block_online", "lane_online")
AFTER_ONLINE = ("reverse_pass", "row_stream")

# launch meta-parameters a family's kernel asserts (beyond its block sizes other than XBLOCK, which the engine
# keeps for every family): the Tuner leaves them as proposed (outer_loop: XBLOCK = outer count x tile)
PINS = {"outer_loop": ("XBLOCK",)}


def _apply(family, source, args):
    """(code, meta, notes) of one family on source, else NotApplicable."""
    if family == "resident_row":
        return resident_row(source, args["max_row"], args["reduction_hint"])
    if family == "reverse_pass":
        return reverse_pass(source)
    if family == "row_stream":
        return row_stream_reversed(source)
    if family == "lse_scan":
        return lse_scan(source, args.get("aten_ops"))
    if family == "lse_block":
        return lse_block(source, args.get("aten_ops"))
    if family == "window_rows":
        return window_rows(source)
    if family == "channel_copy":
        return channel_copy(source)
    if family == "outer_loop":
        return outer_loop(source)
    if family == "block_online":
        return block_online(source)
    if family == "lane_online":
        return lane_online(source)
    raise NotApplicable(f"unknown rewrite family {family!r}")


def op_rewrite(args):
    """{source, reduction_hint, aten_ops?, families?, max_row?} -> {candidates: [{family, code, meta, notes, pinned}],
    skipped: [{family, why}]}. `source` is one kernel function (decorators are ignored). Where one of ONLINE
    applies, each of AFTER_ONLINE that is wanted is tried on its output too ("block_online+reverse_pass")."""
    source = args["source"]
    wanted = args.get("families") or list(FAMILIES)
    out = {"candidates": [], "skipped": []}
    for family in wanted:
        try:
            code, meta, notes = _apply(family, source, args)
        except NotApplicable as exc:
            out["skipped"].append({"family": family, "why": str(exc)})
            continue
        except SyntaxError as exc:
            out["skipped"].append({"family": family, "why": f"the kernel does not parse: {exc.msg}"})
            continue
        out["candidates"].append({"family": family, "code": code, "meta": meta, "notes": notes,
                                  "pinned": list(PINS.get(family, ()))})
    for online in [c for c in out["candidates"] if c["family"] in ONLINE]:
        for family in (f for f in AFTER_ONLINE if f in wanted):
            try:
                code, meta, notes = _apply(family, online["code"], args)
            except NotApplicable:
                continue  # said already, or said for the kernel as captured
            out["candidates"].append({"family": f"{online['family']}+{family}", "code": code,
                                      "meta": {**online["meta"], **meta}, "notes": f"{online['notes']}; then {notes}",
                                      "pinned": sorted(set(online["pinned"]) | set(PINS.get(family, ())))})
    return out
