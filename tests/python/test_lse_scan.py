"""The lse_scan rewrite family (python/kernelopt/coder/lse_scan.py) on Inductor's real logcumsumexp kernel,
captured on an H100 (tests/fixtures/inductor/survey-h100/level1__59_logcumsumexp: 8192 rows of 32768). Under
Triton's interpreter the captured kernel and its rewrite run on a shrunk copy (the constants Inductor baked
in replaced: rows, row length and row stride), the rest of the code as captured."""
import math
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kernelopt.artifact.static import analyze_source  # noqa: E402
from kernelopt.coder.lse_scan import lse_block, lse_scan  # noqa: E402
from kernelopt.coder.rewrite import NotApplicable, op_rewrite  # noqa: E402
import interpreted  # noqa: E402  (tests/python/interpreted.py: captured kernels under the interpreter)
from interpreted import FIXTURES, captured, runnable  # noqa: E402

LSE = os.path.join(FIXTURES, "survey-h100", "level1__59_logcumsumexp", "module0.py")  # 8192 rows of 32768


LIBDEVICE_SHIM = '''
import triton
import triton.language as tl


@triton.jit
def isinf(x):
    return (x == float("inf")) | (x == float("-inf"))


@triton.jit
def log1p(x):
    return tl.log(1.0 + x)


@triton.jit
def exp(x):
    return tl.exp(x)
'''


def libdevice_shim(tmp_path_factory=None):
    """CUDA's libdevice calls the captured kernel makes, for the interpreter (which has none of them):
    isinf, exp, and log1p as log(1 + x) (the interpreter's arithmetic, for the original only)."""
    import importlib.util
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "libdevice_shim.py")
    with open(path, "w") as f:
        f.write(LIBDEVICE_SHIM)
    spec = importlib.util.spec_from_file_location("libdevice_shim", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jit_of(text, name):
    return interpreted.jit_of(text, name, libdevice=libdevice_shim())


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def run(jit, x, xblock, rblock):
    rows, cols = x.shape
    out = torch.full_like(x, float("nan"))
    jit[(rows // xblock,)](x, out, rows, cols, XBLOCK=xblock, R0_BLOCK=rblock)
    return out


def edge_input(rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g) * 3.0
    x[0, :4] = float("-inf")                    # an all -inf prefix: -inf, then the first finite value
    x[1, 3] = float("inf")                      # +inf from there on
    x[2, 5] = float("nan")                      # NaN from there on
    x[3] = torch.linspace(-300, 300, cols)      # a new maximum at every step, a range exp() cannot span
    x[4] = torch.linspace(300, -300, cols)      # the maximum first, then terms that underflow
    return x


def test_lse_scan_applies_to_the_captured_kernel_with_the_same_signature_and_passes_gate_1_facts():
    k, source = captured(LSE)
    code, meta, notes = lse_scan(source, k["aten_ops"])
    facts = analyze_source(code)
    assert facts["parse_error"] is None and facts["imports"] == []
    kernel = next(f for f in facts["functions"] if f["name"] == k["name"])
    assert kernel["params"] == k["params"] and kernel["constexprs"] == k["constexprs"]
    assert facts["stored_params"][k["name"]] == ["out_ptr0"]
    assert all(t["kind"] == "FunctionDef" for t in facts["toplevel"])
    assert "log1p" not in code and "logcumsumexp" in notes
    assert meta == {}  # block sizes stay the tuner's


@pytest.mark.parametrize("family", [lse_scan, lse_block])
@pytest.mark.parametrize("rows,cols,xblock,rblock", [(6, 37, 1, 8), (6, 37, 2, 16), (8, 64, 4, 64), (6, 7, 1, 8)])
def test_lse_scan_matches_float64_and_the_captured_kernel_with_inf_nan_and_wide_ranges(family, rows, cols, xblock,
                                                                                      rblock):
    k, source = captured(LSE)
    code, _, _ = family(source, k["aten_ops"])
    header = source[:source.index("@triton_heuristics.")]
    rewritten = jit_of(runnable(header + code, rows, cols), k["name"])
    original = jit_of(runnable(source, rows, cols), k["name"])
    x = edge_input(rows, cols, seed=rows * cols)
    got, want = run(rewritten, x, xblock, rblock), run(original, x, xblock, rblock)
    ref = torch.logcumsumexp(x.double(), dim=1)
    assert torch.equal(torch.isnan(got), torch.isnan(ref)), (got, ref)
    assert torch.equal(torch.isinf(got) & (got > 0), torch.isinf(ref) & (ref > 0))
    assert torch.equal(torch.isinf(got) & (got < 0), torch.isinf(ref) & (ref < 0))
    finite = torch.isfinite(ref)
    err = (got.double() - ref).abs()[finite]
    assert float(err.max()) <= 1e-4 + 1e-4 * float(ref.abs()[finite].max()), float(err.max())
    # as close to float64 as the captured kernel is (the model gate's rule), within fp32 rounding
    base_err = (want.double() - ref).abs()[finite].nan_to_num(posinf=math.inf)
    assert float(err.max()) <= 4 * float(base_err.max()) + 1e-5


def test_lse_scan_declines_what_it_does_not_understand_with_a_reason():
    k, source = captured(LSE)
    with pytest.raises(NotApplicable, match="not a logcumsumexp alone"):
        lse_scan(source, k["aten_ops"] + ["aten.mul"])  # something fused before or after the scan
    with pytest.raises(NotApplicable, match="not a logcumsumexp alone"):
        lse_scan(source, None)  # an engine that sends no ATen ops gets no rewrite
    cumsum, cumsum_source = captured(os.path.join(FIXTURES, "survey-h100", "level1__23_cumsum", "module0.py"))
    with pytest.raises(NotApplicable, match="not a log-add-exp"):
        lse_scan(cumsum_source, ["aten.logcumsumexp"])  # a scan that adds: declined whatever the ops claim
    skipped = op_rewrite({"source": source, "reduction_hint": "INNER", "families": ["lse_scan"]})["skipped"]
    assert skipped and "ATen ops" in skipped[0]["why"]
    applied = op_rewrite({"source": source, "families": ["lse_scan"], "aten_ops": k["aten_ops"]})
    assert [c["family"] for c in applied["candidates"]] == ["lse_scan"]
    every = op_rewrite({"source": source, "aten_ops": k["aten_ops"], "reduction_hint": "INNER", "max_row": 32768})
    assert {"lse_scan", "lse_block"} <= {c["family"] for c in every["candidates"]}  # both asked for by default


COMPILE = """
import sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import triton
sys.path.insert(0, "tests/python")
from interpreted import captured, runnable
from test_lse_scan import LSE
from kernelopt.coder.lse_scan import lse_block
from kernelopt.device import kernels
k, source = captured(LSE)
code, _, _ = lse_block(source, k["aten_ops"])
header = source[:source.index("@triton_heuristics.")]
jit = kernels.load_kernel_source(runnable(header + code, 8192, 32768), k["name"])  # the captured sizes, no driver line
signature = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "r0_numel": "i32",
             "XBLOCK": "constexpr", "R0_BLOCK": "constexpr"}
try:
    compiled = triton.compile(ASTSource(jit, signature=signature, constexprs={"XBLOCK": 1, "R0_BLOCK": 2048}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 16})
except FileNotFoundError as exc:  # no ptxas beside Triton
    print("SKIP", exc)
    sys.exit(0)
print("ENTRY" if ".entry " + k["name"] in compiled.asm["ptx"] else "NO ENTRY")
"""


def test_lse_block_compiles_for_an_h100():
    """Triton's own compiler (no GPU needed) takes lse_block's rewrite of the real kernel to PTX for sm_90, at the
    tile the H100 chose for lse_scan (R0_BLOCK 2048, 16 warps): the block that falls back is a branch on a value
    computed at run time, which the interpreter runs as plain Python but the compiler must accept as scf.if."""
    out = interpreted.compiled_apart(COMPILE)
    assert out.strip().endswith("ENTRY") and "NO ENTRY" not in out, out


def test_families_that_read_a_kernel_alone_say_a_scan_s_combine_is_why_they_decline():
    """Inductor's scans come with their combine function beside the kernel (the real cumsum capture); the families
    that read one function decline with that reason, not a count (the bench's under-the-bar reasons quote it)."""
    _, cumsum_source = captured(os.path.join(FIXTURES, "survey-h100", "level1__23_cumsum", "module0.py"))
    skipped = op_rewrite({"source": cumsum_source, "reduction_hint": "INNER", "max_row": 32768,
                          "aten_ops": ["aten.cumsum"]})["skipped"]
    why = {s["family"]: s["why"] for s in skipped}
    for family in ("resident_row", "reverse_pass", "window_rows", "channel_copy", "outer_loop", "block_online"):
        assert "_triton_helper_fn_add0: a scan's combine" in why[family], (family, why[family])


def test_lse_block_takes_its_one_scan_on_ordinary_rows_and_the_running_maximum_only_near_underflow():
    """The fallback must not hide the fast path: on rows of randn * 3 (a block's terms within exp(-40) of its
    maximum) lse_block's result is bit for bit that of its block-maximum path alone; on the edge rows it is not,
    and only the fallback makes them right (the float64 test above)."""
    k, source = captured(LSE)
    code, _, _ = lse_block(source, k["aten_ops"])
    header = source[:source.index("@triton_heuristics.")]
    condition = "tl.min(tl.where(r0_mask, _lse_sum, 1.0)) < 1e-20"
    assert condition in code, code
    block_only = code.replace(condition, "tl.min(tl.where(r0_mask, _lse_sum, 1.0)) < -1.0")  # never taken
    rows, cols = 6, 37
    both, fast = (jit_of(runnable(header + c, rows, cols), k["name"]) for c in (code, block_only))
    ordinary = torch.randn(rows, cols, generator=torch.Generator().manual_seed(5)) * 3.0
    assert torch.equal(run(both, ordinary, 2, 16), run(fast, ordinary, 2, 16))
    edge = edge_input(rows, cols, seed=7)
    assert not torch.equal(run(both, edge, 2, 16).nan_to_num(), run(fast, edge, 2, 16).nan_to_num())
