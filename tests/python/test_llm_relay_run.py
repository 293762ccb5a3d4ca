"""A whole `kernelopt optimize-kernel` run driven by an LLM through the relay provider, on
the CPU under TRITON_INTERPRET=1: the five agents, the gates, the repair loop, a run that
stops to wait for answers and `kernelopt resume`.

The answers are scripted (tests/fixtures/relay/standalone_softmax/answers, named by request
tag): the Coder offers a correct rewrite, a kernel wrong at the last column, one carrying
host code (`os.system`) and one that cannot compile; the Tuner two num_warps; the Repairer's answers arrive only
after the run has stopped for them. Timings under the interpreter mean nothing, so whether
the correct rewrite is kept depends on noise; what is asserted is which gate caught what.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANSWERS = os.path.join(ROOT, "tests", "fixtures", "relay", "standalone_softmax", "answers")
WAITING = 75  # tools/kernelopt/commands.hpp: kExitWaiting



def _verdicts(db):
    """candidate id -> the gates of its verdicts, in the order they were recorded."""
    out = {}
    con = sqlite3.connect(db)
    try:
        for cid, gate in con.execute("SELECT candidate_id, gate FROM verdicts ORDER BY id"):
            out.setdefault(cid, []).append(gate)
    finally:
        con.close()
    return out


def test_relay_run_stops_for_answers_resumes_and_every_gate_catches_its_case(kernelopt, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(os.path.join(ROOT, "examples", "triton", "softmax.py"), work / "softmax.py")
    relay = tmp_path / "relay"
    (relay / "answers").mkdir(parents=True)
    for f in glob.glob(os.path.join(ANSWERS, "*.txt")):
        if not os.path.basename(f).startswith("repairer."):  # the Repairer answers later
            shutil.copy(f, relay / "answers")
    env = dict(os.environ, TRITON_INTERPRET="1", KERNELOPT_EXAMPLE_SMALL="1")
    out = tmp_path / "run"
    argv = [kernelopt, "optimize-kernel", "softmax.py", "--out", str(out), "--workspace", str(tmp_path / "ws"),
            "--device", "cpu", "--llm", f"relay:{relay}", "--budget", "10", "--trials", "10", "--timeout", "600", "--repair-rounds", "1"]

    first = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == WAITING, first.stderr[-4000:]
    assert "kernelopt resume" in first.stderr
    tags = {open(p).read().strip() for p in glob.glob(str(relay / "requests" / "*.tag"))}
    assert {"profiler.0", "planner.0", "coder.softmax_kernel.0", "tuner.softmax_kernel.0",
            "repairer.softmax_kernel.0"} <= tags, tags
    db = tmp_path / "ws" / "store.db"
    before = _verdicts(db)
    assert before, "the first part of the run recorded no verdicts"

    for f in glob.glob(os.path.join(ANSWERS, "repairer.*.txt")):
        shutil.copy(f, relay / "answers")
    second = subprocess.run([kernelopt, "resume", str(out)], cwd=work, env=env, capture_output=True, text=True,
                            timeout=900)
    assert second.returncode == 0, second.stderr[-4000:]

    # nothing the first part verified was verified again: every verdict recorded before the stop is still
    # there, unchanged, and no candidate met a gate twice (a candidate the screen left out before the stop
    # may meet its later gates after it)
    after = _verdicts(db)
    for cid, gates in before.items():
        assert after[cid][:len(gates)] == gates, f"candidate {cid}: a verdict recorded before the stop changed"
    for cid, gates in after.items():
        assert len(gates) == len(set(gates)), f"candidate {cid} met a gate twice: {gates}"
    # the host code never ran, anywhere
    assert not list(tmp_path.rglob("KERNELOPT_PWNED")) and not os.path.exists(os.path.join(ROOT, "KERNELOPT_PWNED"))

    report = json.loads((out / "report.json").read_text())
    kernels = {k["name"]: k for m in report["modules"] for k in m["kernels"]}
    attempts = kernels["softmax_kernel"]["outcome"]["attempts"]
    by_note = {}
    for a in attempts:
        by_note.setdefault(a["origin"], []).append(a)
    rejected = [(a["gate"], a["reason"]) for a in attempts if not a["passed"]]
    assert any(g == "static" and "os" in r for g, r in rejected), rejected        # host code
    # the last column: caught by gate 2, unless the interpreter's noisy screen already rejected it as slower
    assert any(g in ("correctness", "performance") for g, r in rejected), rejected
    assert any("exp3" in r for g, r in rejected), rejected                         # does not compile
    assert "repairer" in by_note, attempts                                         # the repair loop ran
    assert kernels["softmax_kernel"]["plan"]["why"], kernels["softmax_kernel"]["plan"]

    usage = report["llm"]
    assert usage["roles"]["coder"]["requests"] >= 1 and usage["roles"]["repairer"]["requests"] >= 1
    assert usage["total"]["cached"] >= 3  # the resumed run replayed profiler, planner and coder from the store
    with sqlite3.connect(db) as con:
        agents = {a for (a,) in con.execute("SELECT agent FROM llm_exchanges")}
    assert {"profiler", "planner", "coder", "tuner", "repairer"} <= agents
    # the LLM Tuner's two configs of the standalone kernel (num_warps/num_stages only) became candidates
    with sqlite3.connect(db) as con:
        configs = [json.loads(m)["config"] for (m,) in con.execute(
            "SELECT meta_json FROM candidates WHERE kernel = 'softmax_kernel' AND origin = 'tuner'")]
    assert sorted(c["num_warps"] for c in configs) == [2, 8] and all(c["num_stages"] == 3 for c in configs), configs

    assert report["end_to_end"]["passed"], report["end_to_end"]
    optimized = (out / "optimized" / "softmax.py").read_text()
    original = (work / "softmax.py").read_text()
    if report["summary"]["improved"]:
        assert optimized != original and "def launch(x):" in optimized
    else:
        assert optimized == original
