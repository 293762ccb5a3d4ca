"""The kernel library end to end through the CLI, on the CPU under TRITON_INTERPRET=1: a run
stores its verified winner, a second run of the same kernel tries that winner first, verifies
it again and stops there; a corrupted entry is caught by the gates and the search goes on; and
`kernelopt library list|show|export|import` on the file the runs wrote.

The kernel (tests/fixtures/library/slow_relu.py) does its work 64 times over and the scripted
Coder's rewrite once, so the rewrite wins every time even with the interpreter's noisy timings.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures", "library")



class Runs:
    """A workspace, the kernel file and the relay's scripted answers; runs into fresh out dirs."""

    def __init__(self, binary, base):
        self.binary, self.base = binary, base
        self.work = base / "work"
        self.work.mkdir()
        shutil.copy(os.path.join(FIX, "slow_relu.py"), self.work / "slow_relu.py")
        self.relay = base / "relay"
        (self.relay / "answers").mkdir(parents=True)
        for f in glob.glob(os.path.join(FIX, "answers", "*.txt")):
            shutil.copy(f, self.relay / "answers")
        self.ws = base / "ws"
        self.library = self.ws / "library.kolib"
        self.env = dict(os.environ, TRITON_INTERPRET="1")

    def optimize(self, out):
        argv = [self.binary, "optimize-kernel", "slow_relu.py", "--out", str(self.base / out), "--workspace",
                str(self.ws), "--device", "cpu", "--llm", f"relay:{self.relay}", "--coder-candidates", "2",
                "--repair-rounds", "0", "--budget", "2", "--trials", "10", "--timeout", "600"]
        r = subprocess.run(argv, cwd=self.work, env=self.env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-4000:]
        report = json.loads((self.base / out / "report.json").read_text())
        with sqlite3.connect(self.ws / "store.db") as con:
            run_id = con.execute("SELECT id FROM runs WHERE out_dir = ? ORDER BY id DESC LIMIT 1",
                                 (str(self.base / out),)).fetchone()[0]
            cands = con.execute("SELECT id, origin, status FROM candidates WHERE run_id = ? ORDER BY id",
                                (run_id,)).fetchall()
            verdicts = {cid: con.execute("SELECT gate, passed FROM verdicts WHERE candidate_id = ? ORDER BY id",
                                         (cid,)).fetchall() for cid, _, _ in cands}
        return report, cands, verdicts

    def cli(self, *args):
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=120)

    def entries(self, path=None):
        with sqlite3.connect(path or self.library) as con:
            return con.execute("SELECT id, fingerprint, kernel_name, origin, source, code, speedup "
                               "FROM entries ORDER BY id").fetchall()


@pytest.fixture(scope="module")
def runs(kernelopt, tmp_path_factory):
    return Runs(kernelopt, tmp_path_factory.mktemp("library"))


@pytest.fixture(scope="module")
def first(runs):
    return runs.optimize("run1")


def test_first_run_stores_its_verified_winner(runs, first):
    report, cands, _ = first
    kernel = report["modules"][0]["kernels"][0]
    assert kernel["outcome"]["status"] == "improved", kernel["outcome"]
    assert report["summary"]["improved"] and report["end_to_end"]["passed"]
    entries = runs.entries()
    assert len(entries) == 1
    _, fp, name, origin, source, code, speedup = entries[0]
    assert name == "relu_kernel" and origin == "coder" and speedup > 1
    assert "range(64)" not in source and "tl.maximum(x, 0.0)" in source and "tl.maximum(x, 0.0)" in code
    assert report["library"]["written"] == [{"kernel": "relu_kernel", "fingerprint": fp, "result": "added"}]
    assert len(cands) >= 2  # the Coder's two answers were evaluated


def test_second_run_verifies_the_library_winner_again_and_evaluates_fewer_candidates(runs, first):
    _, first_cands, _ = first
    report, cands, verdicts = runs.optimize("run2")
    outcome = report["modules"][0]["kernels"][0]["outcome"]
    assert outcome["status"] == "improved" and outcome["winner_origin"] == "library", outcome
    assert outcome["library_entry"] == runs.entries()[0][0]
    assert [(o, s) for _, o, s in cands] == [("library", "kept")]
    assert len(cands) < len(first_cands)
    # never trusted blindly: every gate ran again, in this run, and passed
    assert [g for g, p in verdicts[cands[0][0]] if p] == ["static", "correctness", "model", "performance"]
    assert "from the library (verified again)" in (runs.base / "run2" / "report.md").read_text()
    assert report["library"]["reused"] == ["relu_kernel"]
    assert len(runs.entries()) == 1  # the same winner: unchanged


def test_corrupted_entry_is_rejected_by_the_gates_and_the_search_goes_on(runs, first):
    broken = runs.base / "broken.kolib"
    shutil.copy(runs.library, broken)
    with sqlite3.connect(broken) as con:  # a winner that computes the wrong thing: no relu at all
        con.execute("UPDATE entries SET code = replace(code, 'tl.maximum(x, 0.0)', 'x'), "
                    "source = replace(source, 'tl.maximum(x, 0.0)', 'x')")
    assert "tl.maximum" not in runs.entries(broken)[0][5]
    saved = runs.library.read_bytes()
    shutil.copy(broken, runs.library)
    try:
        report, cands, verdicts = runs.optimize("run3")
    finally:
        fixed = runs.entries()
        runs.library.write_bytes(saved)
    origins = [o for _, o, _ in cands]
    assert origins[0] == "library" and cands[0][2] == "rejected"
    assert ("correctness", 0) in verdicts[cands[0][0]]
    assert "coder" in origins  # the search went on
    outcome = report["modules"][0]["kernels"][0]["outcome"]
    assert outcome["status"] == "improved" and outcome["winner_origin"] == "coder", outcome
    # the entry that failed its gates was replaced by this run's verified winner
    assert "tl.maximum(x, 0.0)" in fixed[0][5]


def test_library_list_show_export_import(runs, first, tmp_path):
    lib = str(runs.library)
    ls = runs.cli("library", "list", "--library", lib)
    assert ls.returncode == 0, ls.stderr
    assert "1 entry" in ls.stdout and "relu_kernel" in ls.stdout and "coder" in ls.stdout
    eid, fp = runs.entries()[0][:2]
    for key in (str(eid), fp[:10]):
        show = runs.cli("library", "show", key, "--library", lib)
        assert show.returncode == 0, show.stderr
        assert fp in show.stdout and "def relu_kernel" in show.stdout and "tl.maximum(x, 0.0)" in show.stdout
    missing = runs.cli("library", "show", "999", "--library", lib)
    assert missing.returncode == 2 and "no entry" in missing.stderr and missing.stderr.count("\n") == 1

    team = tmp_path / "team.kolib"
    ex = runs.cli("library", "export", str(team), "--library", lib)
    assert ex.returncode == 0 and "1 added" in ex.stdout, ex.stdout + ex.stderr
    assert [e[1] for e in runs.entries(team)] == [fp]
    again = runs.cli("library", "export", str(team), "--library", lib)
    assert "1 unchanged" in again.stdout, again.stdout

    # a teammate's different winner for the same fingerprint, slower: imported, reported, not taken
    with sqlite3.connect(team) as con:
        con.execute("UPDATE entries SET source = source || '# theirs\n', source_hash = 'x', speedup = 1.0001")
    mine = tmp_path / "mine.kolib"
    shutil.copy(runs.library, mine)
    im = runs.cli("library", "import", str(team), "--library", str(mine))
    assert im.returncode == 0, im.stderr
    assert "1 kept" in im.stdout and "conflict" in im.stdout, im.stdout
    assert "# theirs" not in runs.entries(mine)[0][4]

    for bad, what in ((tmp_path / "none.kolib", "no such library file"),
                      (runs.ws / "store.db", "not a kernelopt library file")):
        r = runs.cli("library", "import", str(bad), "--library", str(mine))
        assert r.returncode == 2 and what in r.stderr and r.stderr.count("\n") == 1, r.stderr
    (tmp_path / "junk.kolib").write_text("junk " * 100)
    r = runs.cli("library", "list", "--library", str(tmp_path / "junk.kolib"))
    assert r.returncode == 2 and "not a kernelopt library file" in r.stderr, r.stderr


def test_backend_on_cpu_with_a_real_library_file_changes_nothing(runs, first):
    """Inductor on the CPU writes C++, not Triton: nothing matches, the model runs as torch.compile's."""
    import torch
    import kernelopt
    from kernelopt.library.substitute import read_library

    assert read_library(str(runs.library)) == {}  # the file the engine wrote reads; it holds no Inductor entry
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))
    x = torch.randn(5, 16)
    torch._dynamo.reset()
    expected = torch.compile(model)(x)
    torch._dynamo.reset()
    backend = kernelopt.backend(str(runs.library))
    got = torch.compile(model, backend=backend)(x)
    assert torch.allclose(got, expected, atol=1e-6, rtol=1e-6)
    assert torch.allclose(got, model(x), atol=1e-5, rtol=1e-5)
    assert backend.used == []
    torch._dynamo.reset()
    short = kernelopt.compile(model, library=str(runs.library))
    assert torch.allclose(short(x), expected, atol=1e-6, rtol=1e-6)
    with pytest.raises(Exception, match="no such library file"):
        kernelopt.compile(model, library=str(runs.base / "missing.kolib"))
