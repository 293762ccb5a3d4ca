"""gate_checks' comparison logic on hand-made launch states (no kernel): what counts as a bit
difference between two launches, and how check_launches turns repeats into its verdict lines."""
import pytest

torch = pytest.importorskip("torch")

from kernelopt.gates.launches import (Call, Lazy, check_launches, first_bit_difference, same,  # noqa: E402
                                          program_halves)

# the engine's tolerances per dtype (engine/options.hpp), as it sends them
TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "float16": {"atol": 1e-2, "rtol": 1e-2},
       "bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


NAMES = ["in_ptr0", "out_ptr0", "n"]


def state(out, x=None):
    x = torch.arange(6, dtype=torch.float32) if x is None else x
    return Call([x, out, 6])


def test_bit_difference_sees_signed_zero_and_names_the_element():
    a = state(torch.zeros(2, 3))
    b = a.copy()
    assert first_bit_difference(a, b, NAMES) is None
    b.args[1][1, 2] = -0.0  # equal as numbers, not as bits
    assert first_bit_difference(a, b, NAMES) == {"arg": "out_ptr0", "index": [1, 2], "first": 0.0, "later": -0.0}


def test_bit_difference_same_nan_is_equal_and_outside_the_view_is_seen():
    big = torch.full((10,), float("nan"))
    a = state(big[:6].view(2, 3))
    b = a.copy()
    assert first_bit_difference(a, b, NAMES) is None  # NaN == NaN bit for bit
    whole = torch.empty(0).set_(b.args[1].untyped_storage(), 0, (10,))
    whole[8] = 1.5  # the copy's own storage, past the view
    d = first_bit_difference(a, b, NAMES)
    assert d == {"arg": "out_ptr0 (outside its view)", "index": [8], "first": "nan", "later": 1.5}


def bumping(on_calls):
    """A 'kernel' writing out = 2 * x, plus 1 at [0, 1] on the given calls: a result that varies."""
    calls = {"n": 0}

    def run(c):
        calls["n"] += 1
        c.args[1].copy_((2 * c.args[0]).view(2, 3))
        if calls["n"] in on_calls:
            c.args[1][0, 1] += 1.0
    return run


def exact(c):
    c.args[1].copy_((2 * c.args[0]).view(2, 3))


def records():
    return [(s, 0, "model", state(torch.zeros(2, 3), torch.arange(6, dtype=torch.float32) + s)) for s in (0, 1, 2)]


def test_candidate_varying_between_repeats_fails_with_the_line():
    r = check_launches(records(), exact, bumping({3}), NAMES, TOL, repeats=3)
    (line,) = r["determinism"]["failures"]
    assert line.startswith("non-deterministic: repeat 3 of seed 0 differs from repeat 1 at [0, 1] (3.0 vs 2.0)"), line
    assert r["determinism"]["launches_checked"] == 3
    assert all(run["source"] in ("model", "stale") for run in r["runs"])


def test_original_varying_between_repeats_is_noted_and_its_repeats_compared_at_tolerance():
    r = check_launches(records(), bumping({2}), exact, NAMES, TOL, repeats=3)
    det = r["determinism"]
    assert not det["failures"] and det["launches_checked"] == 2
    assert det["original_nondeterministic"] == [
        "seed 0, launch 0: the original's repeat 2 differs from repeat 1 in out_ptr0 at [0, 1] (3.0 vs 2.0)"]
    (rep,) = [run for run in r["runs"] if run["source"] == "repeat"]
    assert rep["repeat"] == 2
    out = next(t for t in rep["tensors"] if t["arg"] == "out_ptr0")
    assert out["mismatches"] == 1  # the candidate's repeat vs the original's, at tolerance


def test_a_repeat_that_raises_is_a_run_error():
    def raising_second(c, calls={"n": 0}):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("illegal memory access")
        exact(c)
    r = check_launches(records(), exact, raising_second, NAMES, TOL, repeats=2)
    (bad,) = [run for run in r["runs"] if run["error"]]
    assert (bad["source"], bad["seed"], bad["repeat"]) == ("repeat", 0, 2)
    assert bad["error"] == "RuntimeError: illegal memory access"


@pytest.mark.parametrize("failure", [torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
                                     RuntimeError("CUDA error: an illegal memory access was encountered")])
def test_a_launch_the_device_failed_is_raised_not_recorded_against_the_candidate(failure):
    # out of memory is the device's (the server answers it so: the engine retries on fewer seeds, a
    # `resource` verdict); a lost context would fail every later launch of the process (the server restarts it)
    def failing(c):
        raise failure
    with pytest.raises(type(failure)):
        check_launches(records(), exact, failing, NAMES, TOL, repeats=2)
    with pytest.raises(type(failure)):
        check_launches(records(), failing, exact, NAMES, TOL, repeats=2)


def test_launch_copies_keep_the_layout_inductor_baked_into_the_kernel():
    # Inductor passes slices of a wider buffer (a torch.cat's parts) and bakes their strides into
    # the kernel; a compacting .clone() would make it index past the copy (two level-3 problems lost
    # the CUDA context while profiling that way). kernels.clone_args is what profiling and timing use.
    from kernelopt.device import kernels as K
    wide = torch.arange(2 * 6 * 4, dtype=torch.float32).reshape(2, 6, 4)
    left, right = wide[:, :3], wide[:, 3:]
    assert not right.is_contiguous() and right.clone().stride() != right.stride()
    a, b, n = K.clone_args([left, right, 7])
    assert n == 7
    for got, orig in ((a, left), (b, right)):
        assert got.stride() == orig.stride() and got.storage_offset() == orig.storage_offset()
        assert torch.equal(got, orig)
        assert got.untyped_storage().data_ptr() != orig.untyped_storage().data_ptr()
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # one buffer, one copy
    b.fill_(-1.0)
    assert torch.equal(right, wide[:, 3:]) and (wide >= 0).all()  # the recorded launch is untouched


def test_launch_reread_bytes_count_each_later_pass_of_a_row_once_a_storage():
    # the captured long-row softmax reads its input (in_ptr0) in two passes: one more read of the input's bytes
    # per launch; its output, written once, and a kernel of one pass add nothing
    import os
    from kernelopt.artifact.inductor import parse_module
    from kernelopt.inputs.module.ops import launch_reread_bytes
    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")
    (k,) = [k for k in parse_module(open(os.path.join(fixtures, "survey-h100", "level1__07_softmax_long_row",
                                                      "module0.py")).read())["kernels"] if k["kind"] == "reduction"]
    assert k["row_pass_loads"] == {"in_ptr0": 2} and k["params"][:2] == ["in_ptr0", "out_ptr2"], k["params"]
    x, out = torch.empty(6, 100), torch.empty(6, 100)
    assert launch_reread_bytes(k, [[x, out, 6, 100]]) == x.numel() * 4
    assert launch_reread_bytes(k, [[x, out, 6, 100], [x[:3], out[:3], 3, 100]]) == x.numel() * 4 + 3 * 100 * 4
    assert launch_reread_bytes(dict(k, row_pass_loads={"in_ptr0": 3}), [[x, out, 6, 100]]) == 2 * x.numel() * 4
    assert launch_reread_bytes(dict(k, row_pass_loads={}), [[x, out, 6, 100]]) == 0
    # a reread pointer viewing the storage of an argument read once before it still counts (that one adds nothing)
    reread_second = dict(k, params=["out_ptr2", "in_ptr0"] + k["params"][2:])
    assert launch_reread_bytes(reread_second, [[x[:3], x, 6, 100]]) == x.numel() * 4


def test_launch_bytes_count_an_argument_updated_in_place_twice():
    # the captured MLP block's bias+GELU kernel updates the GEMM's output in place (in_out_ptr0):
    # read and written, so its bytes cross twice; the bias (in_ptr0) is read once
    import os
    from kernelopt.artifact.inductor import parse_module
    from kernelopt.inputs.module.ops import launch_bytes
    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")
    art = parse_module(open(os.path.join(fixtures, "mlp_block_small.py")).read())
    k = next(k for k in art["kernels"] if k["mutated_args"] == ["in_out_ptr0"])
    assert k["params"][:2] == ["in_out_ptr0", "in_ptr0"], k["params"]
    out, bias = torch.empty(64, 256), torch.empty(256)
    assert launch_bytes(k, [[out, bias, out.numel()]]) == 2 * out.numel() * 4 + bias.numel() * 4
    assert launch_bytes(k, [[out, bias, 0], [out, bias, 0]]) == 2 * (2 * out.numel() * 4 + bias.numel() * 4)
    plain = dict(k, mutated_args=[])
    assert launch_bytes(plain, [[out, bias, 0]]) == out.numel() * 4 + bias.numel() * 4


def test_program_halves_wrap_the_kernel_body_in_one_half_of_the_grid():
    src = ('import triton\nimport triton.language as tl\n\n\n'
           '@triton.jit\n'
           'def k(out_ptr, n,\n'
           '      B: tl.constexpr):\n'
           '    # a comment\n'
           '    note = "é → ü"; row = tl.program_id(0)\n'
           '    for i in range(2):\n'
           '        tl.store(out_ptr + row * n + i, 1.0)\n'
           '\n'
           '\n'
           'def host(x):\n'
           '    return x\n')
    upper, lower = program_halves(src, "k")
    linear = ("(tl.program_id(0).to(tl.int64) + tl.program_id(1).to(tl.int64) * tl.num_programs(0).to(tl.int64) + "
              "tl.program_id(2).to(tl.int64) * tl.num_programs(0).to(tl.int64) * tl.num_programs(1).to(tl.int64))")
    half = "(tl.num_programs(0).to(tl.int64) * tl.num_programs(1).to(tl.int64) * tl.num_programs(2).to(tl.int64)) // 2"
    assert upper == src.replace('    note = "é → ü"; row = tl.program_id(0)\n    for i in range(2):\n        tl.store',
                                f'    if {linear} >= {half}:  # kernelopt gate 2: one half of the programs\n'
                                '        note = "é → ü"; row = tl.program_id(0)\n        for i in range(2):\n'
                                '            tl.store')
    assert lower == upper.replace(f" >= {half}", f" < {half}")
    assert upper.endswith("\n\n\ndef host(x):\n    return x\n")  # the host function is left alone
    compile(upper, "<upper>", "exec")
    assert program_halves(src, "host") is None  # never reads a program id
    assert program_halves(src.replace("tl.store(out_ptr + row * n + i, 1.0)", "return"), "k") is None  # returns
    assert program_halves(src, "missing") is None
    tabs = src.replace("    ", "\t")
    compile(tabs, "<tabs>", "exec")
    assert program_halves(tabs, "k") is None  # indented with tabs


def test_halves_copies_launch_with_the_config_the_candidate_chose():
    from types import SimpleNamespace as NS

    from kernelopt.device.kernels import pin_config

    def cfg(x):
        return NS(kwargs={"XBLOCK": x}, num_warps=4, num_stages=1)
    chosen = cfg(64)
    # Inductor: the candidate ran (one launcher left); a copy not yet compiled keeps only that config
    copy = pin_config(NS(configs=[cfg(32), cfg(64)], launchers=[]), NS(launchers=[NS(config=chosen)]))
    assert copy.configs == [chosen]
    # a copy compiled when its module loaded (a launcher per config) keeps the chosen one's launcher
    compiled = [NS(config=cfg(32)), NS(config=cfg(64)), NS(config=cfg(128))]
    copy = pin_config(NS(configs=[cfg(32), cfg(64), cfg(128)], launchers=list(compiled)),
                      NS(launchers=[NS(config=chosen)]))
    assert copy.launchers == [compiled[1]]
    # triton.autotune: the Autotuner's best config
    copy = pin_config(NS(configs=[cfg(32), cfg(64)]), NS(best_config=chosen))
    assert copy.configs == [chosen]
    # one config already, or nothing chosen: left alone
    one = NS(configs=[cfg(32)])
    assert pin_config(one, NS(launchers=[NS(config=chosen)])).configs == [cfg(32)]
    two = NS(configs=[cfg(32), cfg(64)])
    assert pin_config(two, NS()).configs == [cfg(32), cfg(64)]


RACE = """
import triton
import triton.language as tl



@triton.jit
def rows(out_ptr, x_ptr, n, RACE: tl.constexpr, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    if RACE:  # clears the next row first: harmless while programs run in order
        if row + 1 < tl.num_programs(0):
            tl.store(out_ptr + (row + 1) * n + cols, tl.zeros([B], tl.float32), mask=cols < n)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n)
    tl.store(out_ptr + row * n + cols, x * 2.0, mask=cols < n)
"""


def test_halves_of_the_grid_catch_a_race_between_programs_that_launch_order_hides(tmp_path):
    # real kernels under the interpreter, which runs programs one after another, in order: a race
    # where a program clears the next row before writing its own passes the plain comparison (as on
    # a GPU, where the programs of a small grid run side by side) and loses when the upper half of
    # the programs runs first
    from kernelopt.inputs.triton.session import load_file
    names = ["x_ptr", "out_ptr", "n"]
    recs = [(s, 0, "model", Call([torch.randn(4, 5, generator=torch.Generator().manual_seed(s)), torch.zeros(4, 5), 5]))
            for s in (0, 1)]

    def check(race):
        path = tmp_path / f"race{race}.py"
        path.write_text(RACE)
        kernel = load_file(str(path)).rows
        upper, lower = (load_file(str(path), t).rows for t in program_halves(RACE, "rows"))

        def launcher(k, r=race):
            return lambda c: k[(4,)](c.args[1], c.args[0], 5, RACE=r, B=8)
        return check_launches(recs, launcher(kernel, 0), launcher(kernel), names, TOL, repeats=1,
                              halves=lambda: (launcher(upper), launcher(lower)))

    def mismatches(result, order):
        (run,) = [r for r in result["runs"] if r["source"] == "halves" and r["order"] == order]
        assert run["seed"] == 0 and run["error"] is None  # the first seed only
        return next(t for t in run["tensors"] if t["arg"] == "out_ptr")["mismatches"]
    clean, raced = check(0), check(1)
    for r in (clean, raced):
        assert all(t["mismatches"] == 0 for run in r["runs"] if run["source"] != "halves" for t in run["tensors"])
        assert len([run for run in r["runs"] if run["source"] == "halves"]) == 2
    assert (mismatches(clean, "upper half first"), mismatches(clean, "lower half first")) == (0, 0)
    # rows 2-3 are the upper half: row 2 written first, then cleared by row 1's program
    assert (mismatches(raced, "upper half first"), mismatches(raced, "lower half first")) == (5, 0)


def test_halves_are_loaded_and_run_only_for_a_candidate_that_passed_every_earlier_run():
    asked = []

    def halves():
        asked.append(1)
        return exact, exact
    passing = check_launches(records(), exact, exact, NAMES, TOL, repeats=2, halves=halves)
    assert len(asked) == 1 and [r["order"] for r in passing["runs"] if r["source"] == "halves"] == [
        "upper half first", "lower half first"]
    for cand in (bumping({1}), bumping({2})):  # wrong on its first launch; varying between repeats
        r = check_launches(records(), exact, cand, NAMES, TOL, repeats=2, halves=halves)
        assert len(asked) == 1 and not [run for run in r["runs"] if run["source"] == "halves"]


def test_comparisons_chunk_by_chunk_give_the_evidence_of_one_pass(monkeypatch):
    # a 6-16 GB output is compared a chunk at a time (float64 temporaries of one chunk); the counts,
    # maxima and first mismatches (as indices into the whole shape) must be those of the whole
    from kernelopt.gates import compare
    torch.manual_seed(0)
    expected = torch.randn(6, 7, 5)
    got = expected.clone()
    got[1, 2, 3] += 1.0
    got[4, 6, 0] = float("nan")
    got[5, 0, 1] = float("inf")
    whole = compare.compare_tensors(got, expected, 1e-4, 1e-4)
    monkeypatch.setattr(compare, "CHUNK", 11)  # chunks that cut rows and the last one short
    chunked = compare.compare_tensors(got, expected, 1e-4, 1e-4)
    assert chunked == whole
    assert (chunked["mismatches"], chunked["nan_mismatches"], chunked["inf_mismatches"]) == (1, 1, 1)
    assert [m["index"] for m in chunked["first_mismatches"]] == [[1, 2, 3], [4, 6, 0], [5, 0, 1]]
    assert compare.error_vs_reference(got, expected.double()) == pytest.approx(1.0, abs=1e-6)
    assert compare.specials_vs_reference(got, expected.double()) == 2
    rounded = compare.compare_tensors(got, expected.double(), 1e-4, 1e-4, round_expected_to=torch.float32)
    assert rounded["mismatches"] == 1 and rounded["dtype"] == "float32"
    other = got.clone()
    other[5, 6, 4] = -other[5, 6, 4]
    assert first_bit_difference(Call([got]), Call([other]), ["x"])["index"] == [5, 6, 4]
    assert not same(got, other) and same(got, got.clone())


def test_lazy_states_are_made_seed_by_seed_and_the_stale_runs_take_the_seed_before():
    # the module path's states are Lazy: made when check_launches reaches their seed (the session
    # holds one seed's launches at a time); seed 0 is made again at the end for its stale run
    made = []

    def lazy(seed):
        def load():
            made.append(seed)
            return state(torch.zeros(2, 3), torch.arange(6, dtype=torch.float32) + seed)
        return Lazy(load)
    r = check_launches([(s, 0, "model", lazy(s)) for s in (0, 1, 2)], exact, exact, NAMES, TOL, repeats=2)
    assert made == [0, 1, 2, 0]
    stale = [(run["seed"], run["stale_from_seed"]) for run in r["runs"] if run["source"] == "stale"]
    assert stale == [(0, 2), (1, 0), (2, 1)]
    assert all(run["error"] is None and all(t["mismatches"] == 0 for t in run["tensors"]) for run in r["runs"])

    def skips_if_looks_done(c):  # leaves an output alone when it already holds something
        if not bool(c.args[1].any()):
            exact(c)
    caught = check_launches([(s, 0, "model", lazy(s)) for s in (0, 1, 2)], exact, skips_if_looks_done, NAMES,
                            TOL, repeats=1)
    bad = [run for run in caught["runs"] if any(t["mismatches"] for t in run["tensors"])]
    assert {run["source"] for run in bad} == {"stale"} and len(bad) == 3


def answered_records():
    """Launch states whose output already holds the original's answer: what a recorded launch looks like
    when the caching allocator hands the output buffer the block an earlier forward on the same seed
    wrote (seen on an H100 at 4096 x 393216: the softmax's uninitialized output equalled its result)."""
    return [(s, 0, "model", state((2 * (torch.arange(6, dtype=torch.float32) + s)).view(2, 3),
                                  torch.arange(6, dtype=torch.float32) + s)) for s in (0, 1, 2)]


def test_an_output_already_holding_the_answer_is_still_compared_at_tolerance():
    # Inductor names what a kernel writes out_ptr*/in_out_ptr*: such an argument is an output even
    # where the original leaves its bits as they were, so a result within tolerance passes
    def close(c):
        c.args[1].copy_((2 * c.args[0]).view(2, 3) * (1 + 1e-6))
    r = check_launches(answered_records(), exact, close, NAMES, TOL, repeats=1)
    bad = [t for run in r["runs"] for t in run["tensors"] if t["mismatches"]]
    assert not bad, bad


def test_a_candidate_that_skips_work_is_caught_when_the_output_already_held_the_answer():
    # the stale runs need to know what the original writes; an output holding the answer before the
    # launch must not hide it (else a candidate that writes nothing passes on every seed)
    def nothing(c):
        pass
    r = check_launches(answered_records(), exact, nothing, NAMES, TOL, repeats=1)
    stale_bad = [run for run in r["runs"] if run["source"] == "stale"
                 and any(t["mismatches"] for t in run["tensors"])]
    assert len(stale_bad) == 3


def test_a_kernel_s_own_stores_declare_its_outputs_whatever_their_names():
    # a standalone kernel names its arguments as its author likes: the parameters its code stores through are
    # its outputs, so an output already holding the answer still gets its stale runs
    import textwrap
    from kernelopt.gates.launches import stored_by
    src = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def double(x, result, n, BLOCK: tl.constexpr):
            i = tl.arange(0, BLOCK)
            tl.store(result + i, 2 * tl.load(x + i), mask=i < n)
        """)
    import importlib.util
    import os
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "double_kernel.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("double_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert stored_by(mod.double) == ("result",)
    names = ["x", "result", "n"]

    def nothing(c):
        pass
    r = check_launches(answered_records(), exact, nothing, names, TOL, repeats=1, stored=stored_by(mod.double))
    assert len([run for run in r["runs"] if run["source"] == "stale" and any(t["mismatches"] for t in run["tensors"])]) == 3
    blind = check_launches(answered_records(), exact, nothing, names, TOL, repeats=1)
    assert not [run for run in blind["runs"] if run["source"] == "stale"]  # what the declaration adds


def test_gate_3_records_a_reference_that_raised_but_raises_the_device_running_out():
    from kernelopt.gates.outputs import compare_outputs
    base, cand = [torch.zeros(4)], [torch.ones(4)]  # differ: the float64 reference is asked for

    def reference_raising(exc):
        def reference():
            raise exc
        return reference
    line = lambda exc: f"{type(exc).__name__}: {exc}"  # noqa: E731
    (out,) = compare_outputs(base, cand, TOL, reference_raising(ValueError("bad shapes")), error_line=line)
    assert out["matches_baseline"] is False and out["reference_error"] == "ValueError: bad shapes"
    with pytest.raises(torch.OutOfMemoryError):
        compare_outputs(base, cand, TOL, reference_raising(torch.OutOfMemoryError("CUDA out of memory")),
                        error_line=line)


HALVES_COMPILE = """
import sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import triton
sys.path.insert(0, "tests/python")
from interpreted import HEADER
from test_window_rows import kernel_function
from kernelopt.device import kernels
from kernelopt.gates.launches import program_halves
name, text = kernel_function("tests/fixtures/inductor/survey-h200/level1__64_softmax_fp16_long_row/module0.py")
upper, lower = program_halves(HEADER + text, name)
head = next(line for line in upper.splitlines(keepends=True) if "kernelopt gate 2" in line)
consts = "    xnumel = 8192\\n    r0_numel = 262144\\n"
assert consts + head in upper, upper  # Inductor's static sizes stay before the branch
wrapped = upper.replace(consts, "").replace(head, head + "    " + consts.replace("\\n    ", "\\n        "))
signature = {"in_ptr0": "*fp16", "out_ptr2": "*fp16", "xnumel": "i64", "r0_numel": "i64", "XBLOCK": "constexpr",
             "R0_BLOCK": "constexpr"}  # the capture's own: Inductor indexes 8192 x 262144 elements in 64 bits
for label, source in (("upper", upper), ("lower", lower), ("wrapped", wrapped)):
    jit = kernels.load_kernel_source(source, name)
    try:
        triton.compile(ASTSource(jit, signature=signature, constexprs={"XBLOCK": 1, "R0_BLOCK": 2048}),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 16})
        print(label, "compiled")
    except FileNotFoundError as exc:  # no ptxas beside Triton
        print("SKIP", exc)
        sys.exit(0)
    except Exception as exc:
        print(label, "rejected", str(exc).strip().splitlines()[-1][:200])
"""


def test_program_halves_of_a_64_bit_indexed_kernel_compile_for_an_h100():
    """The H100 rejected every candidate of level1/64's kernel in gate 2 (2026-12-07): its halves copies rebound
    the int64 `xnumel` argument to an int32 literal inside the branch. Triton's own compiler (no GPU needed) takes
    both copies of the real capture to PTX; the copy wrapped the old way is rejected with the GPU's error."""
    from interpreted import compiled_apart
    out = compiled_apart(HALVES_COMPILE)
    lines = out.strip().splitlines()
    assert lines[:2] == ["upper compiled", "lower compiled"], out
    assert lines[2].startswith("wrapped rejected") and "redefines it as int32" in lines[2], out


def test_bytes_outside_a_channels_last_view_are_found_without_an_element_index(monkeypatch):
    """A channels-last (permuted) view covers one span of its storage: gate 2 compares the rest of the storage
    from ranges, as for a contiguous view, and finds the same as the element-by-element index it built before
    (which held a 6.4 GB input's int64 index on the host: 70 s of gate 2 for one candidate on the H100)."""
    from kernelopt.gates import launches

    base = torch.arange(2 * 3 * 4 * 5 + 7, dtype=torch.float32)  # 3 elements before the view, 4 after it

    def nchw_channels_last(storage):
        return storage[3:123].view(2, 4, 5, 3).permute(0, 3, 1, 2)

    pre, expected = nchw_channels_last(base.clone()), nchw_channels_last(base.clone())
    stray = base.clone()
    stray[1] = -1.0  # a store before the view's first element
    stray[125] = float("nan")  # and one past its last
    got = nchw_channels_last(stray)
    assert not pre.is_contiguous() and pre.is_contiguous(memory_format=torch.channels_last)
    assert launches._outside_ranges([("x", pre, expected, got)], base.numel()) == [(0, 3), (123, 127)]
    assert launches._outside_ranges([("x", pre[:, :, ::2], expected, got)], base.numel()) is None  # gaps

    def evidence():
        (ev,) = launches.compare_outside_views(Call([pre]), Call([expected]), Call([got]), ["x"])
        return ev
    dense = evidence()
    assert dense["arg"] == "x (outside its view)" and dense["numel"] == 7 and dense["unchanged_by_original"]
    assert dense["mismatches"] + dense["nan_mismatches"] == 2, dense
    monkeypatch.setattr(launches, "_dense_span", lambda t: None)  # the element-by-element index
    assert evidence() == dense


def test_stop_early_ends_the_check_at_the_first_failing_run_and_says_where():
    # the worker's check ops pass stop_early: a rejected candidate's remaining runs are most of its gate time on a GPU
    full = check_launches(records(), exact, bumping({3}), NAMES, TOL, repeats=3)
    short = check_launches(records(), exact, bumping({3}), NAMES, TOL, repeats=3, stop_early=True)
    assert full["stopped_early"] is None and short["determinism"]["failures"] == full["determinism"]["failures"][:1]
    assert short["stopped_early"].startswith("stopped at the first failing run (seed 0, launch 0, its repeats)")
    assert [run["seed"] for run in short["runs"]] == [0] and len(full["runs"]) > len(short["runs"])

    def wrong_on_seed_1(c):
        exact(c)
        if float(c.args[0][0]) == 1.0:  # seed 1's input starts at 1
            c.args[1][0, 0] += 1.0
    r = check_launches(records(), exact, wrong_on_seed_1, NAMES, TOL, repeats=2, stop_early=True)
    bad = [run for run in r["runs"] if any(t["mismatches"] for t in run["tensors"])]
    assert [(run["source"], run["seed"]) for run in bad] == [("model", 1)]
    assert r["runs"][-1] is bad[0] and {run["seed"] for run in r["runs"]} == {0, 1}  # nothing after it, no seed 2
    assert "(seed 1, launch 0)" in r["stopped_early"]


def test_stop_early_leaves_a_passing_candidate_s_evidence_whole():
    halves_made = []

    def halves():
        halves_made.append(True)
        return exact, exact
    full = check_launches(records(), exact, exact, NAMES, TOL, repeats=2, halves=halves)
    short = check_launches(records(), exact, exact, NAMES, TOL, repeats=2, halves=halves, stop_early=True)
    assert short["stopped_early"] is None and halves_made == [True, True]
    key = [(run["source"], run["seed"], run.get("order")) for run in full["runs"]]
    assert key == [(run["source"], run["seed"], run.get("order")) for run in short["runs"]]
    assert {"model", "stale", "halves"} <= {k[0] for k in key}


def test_stop_early_catches_a_candidate_that_skips_work_at_its_first_stale_run():
    def nothing(c):
        pass
    r = check_launches(answered_records(), exact, nothing, NAMES, TOL, repeats=1, stop_early=True)
    bad = [run for run in r["runs"] if any(t["mismatches"] for t in run["tensors"])]
    assert [(run["source"], run["seed"], run["stale_from_seed"]) for run in bad] == [("stale", 1, 0)]
    assert "the stale run of seed 1 from seed 0, launch 0" in r["stopped_early"]
