"""Faults in the tool's own path, with the real binary, real subprocesses and the real SQLite store,
on the CPU under TRITON_INTERPRET=1: the engine killed with SIGKILL mid-run and `kernelopt resume`
finishing it (nothing verified lost or verified twice, the store intact); the worker killed with
SIGKILL mid-request (restarted, the run finishes); two runs on one workspace at once (both
finish); an unwritable run directory (one clear line, the store untouched).

The runs optimize tests/adversarial/targets/gelu_special.py, the Coder answered by a relay
provider with a correct rewrite and two wrong ones. Not timed: a kill lands wherever the run
is, and what is asserted holds wherever that is.
"""
import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADVERSARIAL = os.path.join(ROOT, "tests", "adversarial")
TARGET = os.path.join(ADVERSARIAL, "targets", "gelu_special.py")
CASES = ["b_gelu_control", "b_gelu_no_sign", "b_gelu_tail_store"]



def relay_dir(tmp_path, name="relay"):
    """A relay folder whose Coder answer holds the CASES (in the adversarial suite's answer format)."""
    relay = tmp_path / name
    (relay / "answers").mkdir(parents=True)
    text = "".join(f"\n### Candidate {i + 1}\n" + open(os.path.join(ADVERSARIAL, "cases", c + ".txt")).read()
                   for i, c in enumerate(CASES))
    (relay / "answers" / "coder.gelu_kernel.0.txt").write_text(text)
    return relay


def argv(kernelopt, out, workspace, relay):
    return [kernelopt, "optimize-kernel", TARGET, "--out", str(out), "--workspace", str(workspace), "--device", "cpu",
            "--llm-agent", f"coder=relay:{relay}", "--coder-candidates", str(len(CASES)), "--repair-rounds", "0",
            "--budget", str(len(CASES)),
            "--trials", "10", "--timeout", "300"]


ENV = dict(os.environ, TRITON_INTERPRET="1")


def rows(db, sql):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as con:
        return con.execute(sql).fetchall()


def verdicts(db):
    try:
        return rows(db, "SELECT id, candidate_id, gate, passed, reason FROM verdicts ORDER BY id")
    except sqlite3.OperationalError:  # the store is being created: no table yet
        return []


def integrity(db):
    return rows(db, "PRAGMA integrity_check")[0][0]


def wait_for(predicate, proc, what, limit_s=600):
    """Polls predicate until true; fails if proc ends first or limit_s passes (a guard, not a timing)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if predicate():
            return
        assert proc.poll() is None, f"the run ended (exit {proc.returncode}) before {what}"
        time.sleep(0.05)
    pytest.fail(f"no {what} within {limit_s} s")


def worker_pids(engine_pid):
    """Pids of the `python -m kernelopt.worker` processes the engine started."""
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = open(stat).read().rsplit(")", 1)[1].split()
            cmd = open(stat.replace("stat", "cmdline"), "rb").read().replace(b"\0", b" ")
        except OSError:
            continue
        if int(fields[1]) == engine_pid and b"kernelopt.worker" in cmd:
            out.append(int(stat.split("/")[2]))
    return out


def test_engine_killed_mid_run_resumes_without_losing_or_repeating_a_verdict(kernelopt, tmp_path):
    out, ws, relay = tmp_path / "run", tmp_path / "ws", relay_dir(tmp_path)
    db = ws / "store.db"
    proc = subprocess.Popen(argv(kernelopt, out, ws, relay), cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    # killed as soon as gate 2 has judged one candidate: the others have passed gate 1 and wait for gates 2-4
    wait_for(lambda: db.exists() and any(v[2] == "correctness" for v in verdicts(db)), proc, "a gate-2 verdict")
    os.killpg(proc.pid, signal.SIGKILL)  # the engine and everything in its session, the worker included
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    before = verdicts(db)
    finished_before = {cid for (cid, status) in rows(db, "SELECT id, status FROM candidates")
                       if status in ("rejected", "passed", "kept")}
    # the kill left a candidate half way: gate 1 passed, gates 2-4 still to come
    half_way = {cid for (cid, status) in rows(db, "SELECT id, status FROM candidates") if status == "pending"}
    assert any(v[1] in half_way and v[2] == "static" and v[3] for v in before), before
    assert integrity(db) == "ok"
    assert not (out / "report.json").exists()

    resumed = subprocess.run([kernelopt, "resume", str(out)], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert "continuing run" in resumed.stderr and "passed gate 1 earlier in this run" in resumed.stderr
    after = verdicts(db)
    assert after[:len(before)] == before, "a verdict recorded before the kill was lost or changed"
    gates = [(cid, gate) for (_, cid, gate, _, _) in after]
    assert len(gates) == len(set(gates)), f"a candidate went through a gate twice: {gates}"
    for cid in finished_before:
        assert [v for v in after if v[1] == cid] == [v for v in before if v[1] == cid], f"candidate {cid} re-verified"
    assert integrity(db) == "ok"
    assert rows(db, "SELECT COUNT(*) FROM runs")[0][0] == 1  # continued, not started again
    assert rows(db, "SELECT status FROM runs")[0][0] == "done"
    # every candidate of the answer has its verdict: the correct one passed, the two wrong ones were caught
    # the Coder's cases (the planner's per-kernel floor leaves room for one offline Tuner config beside them)
    statuses = sorted(s for (s,) in rows(db, "SELECT status FROM candidates WHERE origin = 'coder'"))
    assert statuses == ["kept", "rejected", "rejected"], statuses
    report = json.loads((out / "report.json").read_text())
    assert report["end_to_end"]["passed"], report["end_to_end"]


def test_worker_killed_mid_request_is_restarted_and_the_run_finishes(kernelopt, tmp_path):
    out, ws, relay = tmp_path / "run", tmp_path / "ws", relay_dir(tmp_path)
    db = ws / "store.db"
    proc = subprocess.Popen(argv(kernelopt, out, ws, relay), cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(lambda: db.exists() and len(verdicts(db)) >= 1, proc, "first verdict")
    pids = worker_pids(proc.pid)
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-4000:]
    assert "starting a fresh worker" in stderr, stderr[-4000:]
    assert (out / "report.json").exists()
    # the death is named (a candidate's verdict, or a screen that was then rerun candidate by candidate);
    # no case is left without a verdict (a Tuner config the screen left out has none, by design)
    assert "SIGKILL" in stderr, stderr[-4000:]
    assert rows(db, "SELECT COUNT(*) FROM candidates WHERE status = 'pending' AND origin = 'coder'")[0][0] == 0
    assert integrity(db) == "ok"


def test_two_runs_on_one_workspace_at_once_both_finish(kernelopt, tmp_path):
    ws = tmp_path / "ws"
    procs = []
    for name in ("one", "two"):
        relay = relay_dir(tmp_path, "relay-" + name)
        procs.append(subprocess.Popen(argv(kernelopt, tmp_path / name, ws, relay), cwd=tmp_path, env=ENV,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, stderr = p.communicate(timeout=900)
        assert p.returncode == 0, stderr[-4000:]
    db = ws / "store.db"
    assert integrity(db) == "ok"
    runs = rows(db, "SELECT out_dir, status FROM runs ORDER BY id")
    assert sorted(os.path.basename(d) for d, _ in runs) == ["one", "two"] and {s for _, s in runs} == {"done"}
    # each run's candidates carry their own verdicts
    for (run_id,) in rows(db, "SELECT id FROM runs"):
        cands = rows(db, f"SELECT id FROM candidates WHERE run_id = {run_id} AND origin = 'coder'")
        assert len(cands) == len(CASES)
        for (cid,) in cands:
            assert rows(db, f"SELECT COUNT(*) FROM verdicts WHERE candidate_id = {cid}")[0][0] >= 1
    for name in ("one", "two"):
        assert (tmp_path / name / "report.json").exists()


def test_unwritable_run_dir_is_one_clear_line_and_leaves_the_store_intact(kernelopt, tmp_path):
    ws = tmp_path / "ws"
    db = ws / "store.db"
    first = subprocess.run(argv(kernelopt, tmp_path / "first", ws, relay_dir(tmp_path)), cwd=tmp_path, env=ENV,
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-4000:]
    snapshot = tmp_path / "before.db"
    shutil.copy(db, snapshot)
    dump_before = "\n".join(sqlite3.connect(snapshot).iterdump())

    if os.geteuid() == 0:  # root writes through permission bits: a place no one may create a directory in
        out = "/sys/kernelopt-unwritable-run"
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        os.chmod(locked, 0o555)
        out = str(locked / "run")
    proc = subprocess.run(argv(kernelopt, out, ws, relay_dir(tmp_path, "relay2")), cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("kernelopt: error: "), proc.stderr
    assert "kernelopt-unwritable-run" in proc.stderr or "locked" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert not os.path.exists(out)
    assert integrity(db) == "ok"
    assert "\n".join(sqlite3.connect(db).iterdump()) == dump_before, "the failed run changed the store"
