"""The `channel_copy` rewrite family: the copy into channels-last before a convolution, stored channel-innermost.

Inductor copies a convolution's NCHW input into NHWC with a 2-D tile over y = n*C + c and x = h*W + w: it loads
`x + HW*y` and stores `c + C*x + C*HW*n` with c = y % C, n = y // C. For C = 3 Triton's axis analysis sees no
contiguity in `y % 3`, so each warp's store is strided by 3 elements (a third of each sector used): the copy ran
at 39-43% of the memory bandwidth on an H100 (bench/results/2026-12-06-suite-survey-h100: level2/23, level3/08,
level3/12). Here each program takes whole samples, one after another, with a tile of XBLOCK positions x CP
channels (CP = C rounded up to a power of two, lanes c >= C masked): the channel is the tile's last axis, so the
store's addresses are contiguous across a warp; the load reads each channel's positions contiguously, and Triton
converts the layout between them through shared memory.

Coverage, for any power-of-two XBLOCK and YBLOCK the launcher's grid (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK))
is built from: program p of axis 1 takes samples [p*S, p*S + S) with S = cdiv(YBLOCK, C); cdiv(ynumel, YBLOCK) * S
>= ynumel / C, so every sample has exactly one program, and lanes past ynumel (or xnumel) are masked.

The original's load, epilogue and store stay as written (same addresses, dtypes and arithmetic): only the index
names are bound to the new tile (c for `y % C`, n for `y // C`, y = C*n + c), so results are bit-identical.
"""
import ast

from kernelopt.artifact.exprs import assign_of
from kernelopt.coder.common import NotApplicable, kernel_function

MAX_CHANNELS = 8
SAMPLE = "_kc_sample"     # the loop variable: which of the program's S samples
FIRST = "_kc_first"       # the program's first sample
LANE = "_kc_channel"      # tl.arange(0, CP) along the tile's last axis
SUGGESTED = {"XBLOCK": 256, "YBLOCK": 8, "num_warps": 4}  # 256 x 4 lanes a sample; 3 samples a program at C=3
# elementwise calls an epilogue between the load and the store may make (anything else is declined)
ELEMENTWISE = {"tl.where", "tl.maximum", "tl.minimum", "tl.abs", "tl.exp", "tl.log", "tl.sqrt", "tl.sigmoid",
               "tl.fma", "triton_helpers.maximum", "triton_helpers.minimum", "triton_helpers.promote_to_tensor"}


def _call(node, name):
    return isinstance(node, ast.Call) and ast.unparse(node.func) == name


def _expect(body, i, name, *texts):
    """body[i] is `name = <one of texts>` (compared as ast.unparse writes it)."""
    target, value = assign_of(body[i]) if i < len(body) else (None, None)
    if target != name or ast.unparse(value) not in texts:
        raise NotApplicable(f"statement {i + 1} is not `{name} = {texts[0]}` as Inductor writes a 2-D tile")


def _tile_head(body):
    """The statement index after Inductor's 2-D tile set-up (sizes, yoffset..xmask); declines anything else."""
    i = 0
    while i < len(body) and assign_of(body[i])[0] in ("ynumel", "xnumel") and isinstance(assign_of(body[i])[1], ast.Constant):
        i += 1
    _expect(body, i, "yoffset", "tl.program_id(1) * YBLOCK")
    _expect(body, i + 1, "yindex", "yoffset + tl.arange(0, YBLOCK)[:, None]")
    _expect(body, i + 2, "ymask", "yindex < ynumel", "tl.full([YBLOCK], True, tl.int1)[:, None]")
    _expect(body, i + 3, "xoffset", "tl.program_id(0) * XBLOCK")
    _expect(body, i + 4, "xindex", "xoffset + tl.arange(0, XBLOCK)[None, :]")
    _expect(body, i + 5, "xmask", "xindex < xnumel", "tl.full([XBLOCK], True, tl.int1)[None, :]")
    return i, i + 6


def _index_names(body, start):
    """{name: 'x' | 'y' | 'c' | 'n'} for the index statements from `start` (aliases of xindex and yindex,
    `yindex % C`, `yindex // C`), the channel count C and where they end."""
    kinds, channels = {"xindex": "x", "yindex": "y"}, set()
    i = start
    while i < len(body):
        name, value = assign_of(body[i])
        if name is None or isinstance(value, ast.Call) or name.startswith("tmp"):
            break
        if isinstance(value, ast.Name) and value.id in ("xindex", "yindex"):
            kinds[name] = kinds[value.id]
        elif (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mod, ast.FloorDiv))
              and ast.unparse(value.left) == "yindex" and isinstance(value.right, ast.Constant)
              and isinstance(value.right.value, int)):
            kinds[name] = "c" if isinstance(value.op, ast.Mod) else "n"
            channels.add(value.right.value)
        else:
            raise NotApplicable(f"index `{ast.unparse(body[i])}` is not an alias, `yindex % C` or `yindex // C`")
        i += 1
    if list(kinds.values()).count("c") != 1 or list(kinds.values()).count("n") != 1 or len(channels) != 1:
        raise NotApplicable("y is not split once into `yindex % C` and `yindex // C` with one C")
    return kinds, channels.pop(), i


def _coefficients(offset, kinds):
    """{index kind: coefficient} of an address offset that is a sum of `name` and `int * name` terms."""
    terms, out = [offset], {}
    while terms:
        t = terms.pop()
        if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Add):
            terms += [t.left, t.right]
            continue
        coeff, name = 1, t
        if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult):
            a, b = (t.left, t.right) if isinstance(t.left, ast.Constant) else (t.right, t.left)
            if not (isinstance(a, ast.Constant) and isinstance(a.value, int)):
                raise NotApplicable(f"address term `{ast.unparse(t)}` is not int * index")
            coeff, name = a.value, b
        if not (isinstance(name, ast.Name) and name.id in kinds) or kinds[name.id] in out:
            raise NotApplicable(f"address term `{ast.unparse(t)}` is not one term of a known index")
        out[kinds[name.id]] = coeff
    return out


def _address(call, params, kinds):
    ptr = call.args[0] if call.args else None
    if not (isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) and isinstance(ptr.left, ast.Name)
            and ptr.left.id in params):
        raise NotApplicable(f"address `{ast.unparse(ptr) if ptr else ''}` is not a parameter plus an offset")
    return _coefficients(ptr.right, kinds)


def _set_mask(call, position):
    """The call's mask becomes `xmask & ymask` (the real bounds, whatever XBLOCK the Tuner picks)."""
    mask = ast.parse("xmask & ymask", mode="eval").body
    kw = [k for k in call.keywords if k.arg == "mask"]
    if len(call.args) > position:
        old = call.args[position]
        call.args[position] = mask
    elif kw:
        old, kw[0].value = kw[0].value, mask
    else:
        raise NotApplicable(f"`{ast.unparse(call)}` has no mask")
    if {n.id for n in ast.walk(old) if isinstance(n, ast.Name)} - {"xmask", "ymask"} or not all(
            isinstance(n, (ast.Name, ast.BinOp, ast.BitAnd, ast.Load)) for n in ast.walk(old)):
        raise NotApplicable(f"mask `{ast.unparse(old)}` is not xmask and/or ymask")


def _check_epilogue(stmts):
    for s in stmts:
        name, value = assign_of(s)
        if name is None:
            raise NotApplicable(f"`{ast.unparse(s)}` between the load and the store is not an assignment")
        for c in ast.walk(value):
            if isinstance(c, ast.Call):
                fname = ast.unparse(c.func)
                if not (fname in ELEMENTWISE or fname.startswith(("libdevice.", "tl_math."))
                        or (isinstance(c.func, ast.Attribute) and c.func.attr == "to")):
                    raise NotApplicable(f"`{fname}` in the epilogue is not elementwise")


def channel_copy(source):
    """(code, meta, notes): see the module docstring."""
    tree, fn = kernel_function(source)
    params = [a.arg for a in fn.args.args]
    if "R0_BLOCK" in params or "r0_numel" in params:
        raise NotApplicable("a reduction (R0_BLOCK): not a copy")
    if "YBLOCK" not in params or "XBLOCK" not in params:
        raise NotApplicable("not a 2-D tiled pointwise kernel (no YBLOCK and XBLOCK)")
    if any(isinstance(n, ast.Name) and n.id.startswith("_kc_") for n in ast.walk(fn)):
        raise NotApplicable("the kernel already uses names starting with _kc_")
    calls = [ast.unparse(c.func) for c in ast.walk(fn) if isinstance(c, ast.Call)]
    if calls.count("tl.load") != 1 or calls.count("tl.store") != 1:
        raise NotApplicable(f"{calls.count('tl.load')} loads and {calls.count('tl.store')} stores: a copy has one each")
    body = fn.body
    sizes, at = _tile_head(body)
    kinds, channels, at = _index_names(body, at)
    if channels & (channels - 1) == 0:
        raise NotApplicable(f"C = {channels} is a power of two: Triton's axis analysis already sees `yindex % "
                            f"{channels}` as contiguous runs, so the store is not the strided case")
    if channels > MAX_CHANNELS:
        raise NotApplicable(f"C = {channels}: more than {MAX_CHANNELS} channels, not the small-C copy this family takes")
    rest = body[at:]
    name, load = assign_of(rest[0]) if rest else (None, None)
    if not _call(load, "tl.load"):
        raise NotApplicable("the statement after the indices is not `tmp = tl.load(...)`")
    store = rest[-1]
    if not (isinstance(store, ast.Expr) and _call(store.value, "tl.store")):
        raise NotApplicable("the kernel does not end with its store")
    _check_epilogue(rest[1:-1])
    got_load, got_store = _address(load, params, kinds), _address(store.value, params, kinds)
    hw = got_load.get("y")
    if set(got_load) != {"x", "y"} or got_load["x"] != 1:
        raise NotApplicable(f"the load's offset {got_load} is not x + HW*y")
    if set(got_store) != {"c", "x", "n"} or got_store["c"] != 1 or got_store["x"] != channels:
        raise NotApplicable(f"the store's offset {got_store} is not c + C*x + stride*n with C = {channels}")
    _set_mask(load, 1)
    _set_mask(store.value, 2)
    cp = 1 << (channels - 1).bit_length()
    per_program = f"(YBLOCK + {channels - 1}) // {channels}"
    c_name = next(k for k, v in kinds.items() if v == "c")
    n_name = next(k for k, v in kinds.items() if v == "n")
    aliases = [s for s in body[sizes + 6:at] if assign_of(s)[0] not in (c_name, n_name)]
    head = ast.parse(
        "xoffset = tl.program_id(0) * XBLOCK\n"
        "xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n"  # positions down the tile, channels across
        "xmask = xindex < xnumel\n"
        f"{LANE} = tl.arange(0, {cp})[None, :]\n"
        f"{FIRST} = tl.program_id(1) * ({per_program})\n").body
    loop = ast.parse(
        f"for {SAMPLE} in tl.range(0, {per_program}):\n"
        f"    {n_name} = {FIRST} + {SAMPLE}\n"
        f"    {c_name} = {LANE}\n"
        f"    yindex = {channels} * {n_name} + {c_name}\n"
        f"    ymask = ({c_name} < {channels}) & (yindex < ynumel)\n").body[0]
    loop.body += aliases + rest
    fn.body = body[:sizes] + head + [loop]
    fn.decorator_list = []
    ast.fix_missing_locations(tree)
    notes = (f"channel copy: C = {channels} channels innermost in a tile of XBLOCK positions x {cp} lanes, "
             f"whole samples one after another (HW = {hw}, sample stride {got_store['n']}), "
             "so each warp's store is contiguous")
    return "@triton.jit\n" + ast.unparse(fn) + "\n", dict(SUGGESTED), notes
