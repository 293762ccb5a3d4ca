"""Faults in the tool's own path, with the real binary, real subprocesses and the real SQLite store,
on the CPU under TRITON_INTERPRET=1: the engine killed with SIGKILL mid-run and `kernelopt resume`
finishing it (nothing verified lost or verified twice, the store intact); the worker killed with
SIGKILL mid-request (restarted, the run finishes); two runs on one workspace at once (both
finish); an unwritable run directory (one clear line, the store untouched). Then what issue 20
found as a new user would: two runs into one run directory (locked), a start that failed validation
(claims nothing), a damaged store, workspace, report.json or options.json (one line naming it), the
worker and the current directory, a bad reference(), a worker killed during the end-to-end check,
the LLM set-up checked before capture, Ctrl-C and `resume` of a finished run.

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


# --- issue 20: what a new user meets (one run directory, a damaged workspace, signals, the LLM set-up) --------

def kernel_argv(kernelopt, file, out, workspace, *extra):
    """optimize-kernel of a standalone file with the offline Tuner and one config: the cheapest real run."""
    return [kernelopt, "optimize-kernel", str(file), "--out", str(out), "--workspace", str(workspace), "--device",
            "cpu", "--budget", "1", "--trials", "10", "--timeout", "300", *extra]


def start(args, cwd, env=ENV):
    return subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def read_until(proc, needle):
    """proc's stderr lines up to the first holding needle; fails if proc's stderr ends first."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if needle in line:
            return seen
    proc.wait()
    pytest.fail(f"{needle!r} never came (exit {proc.returncode}); stderr:\n{''.join(seen)[-3000:]}")


def stop(proc):
    """SIGKILL to proc's session (the engine; its worker dies with it), then reaped."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def one_line(proc, code=2):
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc.stderr.rstrip("\n")


def run_cli(args, cwd, env=ENV, timeout=300):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_live_run_directory_is_locked_and_a_dead_runs_lock_is_taken_over(kernelopt, tmp_path):
    out, ws = tmp_path / "r", tmp_path / "ws"
    args = kernel_argv(kernelopt, TARGET, out, ws)
    first = start(args, tmp_path)
    try:
        read_until(first, "[1/5] capturing")
        for second in (args, [kernelopt, "resume", str(out)]):
            line = one_line(run_cli(second, tmp_path, timeout=120))
            assert line == f"kernelopt: error: {out}: a run is in progress there (pid {first.pid})", line
    finally:
        stop(first)
    # the first run was killed: its lock is stale, and the next run takes it over and continues that run
    third = start(args, tmp_path)
    try:
        lines = read_until(third, "[1/5] capturing")
    finally:
        stop(third)
    assert any("continuing run" in line for line in lines), lines
    assert rows(ws / "store.db", "SELECT COUNT(*) FROM runs")[0][0] == 1


def test_the_worker_imports_nothing_from_the_current_directory(kernelopt, tmp_path):
    marker = tmp_path / "imported.marker"
    for name in ("torch", "triton", "kernelopt"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write('{name}\\n')\n")
    broken = tmp_path / "broken.py"
    broken.write_text(open(TARGET).read().replace("def launch(x):", "def launch(x:"))
    proc = run_cli(kernel_argv(kernelopt, broken, tmp_path / "run", tmp_path / "ws"), tmp_path)
    assert not marker.exists(), f"the worker imported {marker.read_text().split()} from the current directory"
    assert one_line(proc).startswith(f"kernelopt: error: {broken}:"), proc.stderr
    assert "syntax error" in proc.stderr


def test_optimize_of_a_module_on_the_cpu_says_inductor_writes_no_triton_kernel_there(kernelopt, tmp_path):
    proc = run_cli([kernelopt, "optimize", os.path.join(ROOT, "examples", "softmax.py"), "--out",
                    str(tmp_path / "run"), "--workspace", str(tmp_path / "ws"), "--device", "cpu"], tmp_path)
    line = one_line(proc)
    assert "Inductor writes C++ kernels on a CPU" in line and "no Triton kernel to optimize" in line, line


def test_worker_errors_and_their_tracebacks_go_to_the_worker_log(kernelopt, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(open(TARGET).read().replace("x = torch.randn(N) * 3", "raise ValueError('no inputs today')"))
    out = tmp_path / "run"
    line = one_line(run_cli(kernel_argv(kernelopt, bad, out, tmp_path / "ws"), tmp_path))
    assert "get_inputs() raised ValueError: no inputs today" in line, line
    log = (out / "logs" / "worker.log").read_text()
    assert "Traceback (most recent call last)" in log and "no inputs today" in log, log


@pytest.mark.parametrize("body, needle", [
    ("raise RuntimeError('reference is broken')", "reference(*get_inputs()) raised RuntimeError: reference is broken"),
    ("return x[:10]", "reference() returned shapes [[10]], launch() [[300]]"),
])
def test_a_bad_reference_fails_before_the_search_in_one_line(kernelopt, tmp_path, body, needle):
    file = tmp_path / "kernel.py"
    file.write_text(open(TARGET).read().replace('return torch.nn.functional.gelu(x, approximate="tanh")', body))
    line = one_line(run_cli(kernel_argv(kernelopt, file, tmp_path / "run", tmp_path / "ws"), tmp_path, timeout=900))
    assert line.startswith(f"kernelopt: error: {file}: ") and needle in line, line


def test_a_worker_killed_during_the_end_to_end_check_exits_4_with_one_line(kernelopt, tmp_path):
    out, ws = tmp_path / "run", tmp_path / "ws"
    proc = start(argv(kernelopt, out, ws, relay_dir(tmp_path)), tmp_path)
    # the line comes as the request goes out; the check then runs for seconds (three seeds, timed trials)
    read_until(proc, "[5/5] verifying end to end")
    pids = worker_pids(proc.pid)
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)
    _, rest = proc.communicate(timeout=900)
    assert proc.returncode == 4, rest[-4000:]
    last = rest.strip().splitlines()[-1]
    assert last.startswith("kernelopt: the end-to-end check of the optimized kernels could not run ("), last
    assert "died during op 'final_check'" in last and last.endswith("; the baseline was kept"), last
    assert sum(line.startswith("kernelopt: ") for line in rest.splitlines()) == 1, rest[-4000:]
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["improved"] is False, "the optimized kernels were never verified: the baseline must stay"
    assert report["reverted_check"]["outcome"] == "could not run", report["reverted_check"]
    assert report["end_to_end"]["passed"], report["end_to_end"]  # the baseline, checked again by a fresh worker


def test_a_start_that_fails_validation_does_not_claim_the_directory(kernelopt, tmp_path):
    file, out, ws = tmp_path / "kernel.py", tmp_path / "run", tmp_path / "ws"
    good = open(TARGET).read()
    file.write_text(good.replace("def launch(x):", "def launch(x:"))
    assert "syntax error" in one_line(run_cli(kernel_argv(kernelopt, file, out, ws), tmp_path))
    file.write_text(good)  # fixed: the same path, another content
    fixed = start(kernel_argv(kernelopt, file, out, ws), tmp_path)
    try:
        read_until(fixed, "[1/5] capturing")
    finally:
        stop(fixed)


@pytest.mark.parametrize("what", ["library", "workspace"])
def test_a_failed_library_or_workspace_check_leaves_no_run_directory(kernelopt, tmp_path, what):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    extra = ["--library", str(notes)] if what == "library" else []
    ws = notes if what == "workspace" else tmp_path / "ws"
    line = one_line(run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "run", ws, *extra), tmp_path))
    assert line.startswith(f"kernelopt: error: {notes}: "), line
    assert not (tmp_path / "run").exists()
    assert notes.read_text() == "my notes\n"


def test_a_damaged_store_is_named_with_how_to_recover(kernelopt, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    con = sqlite3.connect(ws / "store.db")  # a store with a few pages, then cut in the middle of one
    con.execute("CREATE TABLE t(x)")
    con.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 100)
    con.commit()
    con.close()
    data = (ws / "store.db").read_bytes()
    (ws / "store.db").write_bytes(data[:len(data) // 2 + 100])
    damaged = (ws / "store.db").read_bytes()
    line = one_line(run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "run", ws), tmp_path))
    assert line.startswith(f"kernelopt: error: {ws / 'store.db'}: "), line
    assert "move it aside" in line and "library" in line, line
    assert (ws / "store.db").read_bytes() == damaged
    assert not (tmp_path / "run").exists()


def test_an_unwritable_workspace_is_one_line(kernelopt, tmp_path):
    if os.geteuid() == 0:  # root writes through permission bits
        ws = "/proc/kernelopt-unwritable-ws"
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        os.chmod(locked, 0o555)
        ws = str(locked / "ws")
    line = one_line(run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "run", ws), tmp_path))
    assert line.startswith(f"kernelopt: error: {ws}: "), line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text", ['{"modules": [{"index": 0, "module_ms"', '{"modules": [{"index": "zero"}]}'],
                         ids=["truncated", "wrong-type"])
def test_inspect_of_a_damaged_report_names_the_file(kernelopt, tmp_path, text):
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(text)
    line = one_line(run_cli([kernelopt, "inspect", str(run)], tmp_path))
    assert line.startswith(f"kernelopt: error: {run / 'report.json'}: "), line
    assert "json.exception" not in line, line


OPTIONS = {"problem": TARGET, "workspace": "ws", "python": "python3", "device": "cpu", "seeds": [0, 1, 2],
           "final_seeds": [1000, 1001, 1002], "atol": 1e-4, "rtol": 1e-4, "budget": 1, "gate_top_k": 3,
           "screen_trials": 20, "gate_trials": 10, "request_timeout_s": 300, "final_error_ratio": 1.0,
           "input_kind": "triton", "llm": None, "coder_candidates": 3, "repair_rounds": 2}


@pytest.mark.parametrize("text, needle", [
    (json.dumps(OPTIONS)[:60], "not valid JSON"),
    (json.dumps(dict(OPTIONS, atol=None)), '"atol" has the wrong type (null)'),  # what an infinite --atol was saved as
    (json.dumps({k: v for k, v in OPTIONS.items() if k != "seeds"}), '"seeds" is missing'),
], ids=["truncated", "atol-null", "no-seeds"])
def test_resume_with_a_damaged_options_file_names_the_file(kernelopt, tmp_path, text, needle):
    run = tmp_path / "run"
    run.mkdir()
    (run / "options.json").write_text(text)
    line = one_line(run_cli([kernelopt, "resume", str(run)], tmp_path))
    assert line.startswith(f"kernelopt: error: {run / 'options.json'}: ") and needle in line, line
    assert "json.exception" not in line, line


def closed_port_url():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_llm_set_up_is_checked_once_before_capture(kernelopt, tmp_path):
    dead = closed_port_url()
    llm = ["--llm", "openai:test-model", "--llm-option", f"base_url={dead}", "--llm-option",
           "api_key_env=KERNELOPT_TEST_KEY"]
    env = dict(ENV, KERNELOPT_TEST_KEY="sk-test-0123456789abcdef")
    # --llm-required: an endpoint nobody answers, or a missing key, is an error before capture
    line = one_line(run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "a", tmp_path / "ws", *llm, "--llm-required"),
                            tmp_path, env=env))
    assert dead in line and "--llm-required" in line, line
    line = one_line(run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "b", tmp_path / "ws", *llm, "--llm-required"),
                            tmp_path))
    assert "KERNELOPT_TEST_KEY is not set" in line, line
    assert "sk-test" not in line
    # without it: one warning line, before capture, and the run goes on with the offline agents
    proc = start(kernel_argv(kernelopt, TARGET, tmp_path / "c", tmp_path / "ws", *llm), tmp_path, env=env)
    try:
        lines = read_until(proc, "[1/5] capturing")
    finally:
        stop(proc)
    warned = [line for line in lines if dead in line]
    assert len(warned) == 1 and "offline" in warned[0], lines


def test_sigint_leaves_one_message_and_the_run_resumable_and_a_finished_run_is_left_alone(kernelopt, tmp_path):
    out, ws, relay = tmp_path / "run", tmp_path / "ws", relay_dir(tmp_path)
    db = ws / "store.db"
    proc = start(argv(kernelopt, out, ws, relay), tmp_path)
    wait_for(lambda: db.exists() and any(v[2] == "correctness" for v in verdicts(db)), proc, "a gate-2 verdict")
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the foreground process group
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-4000:]
    assert stderr.splitlines()[-1] == f"kernelopt: interrupted; continue with: kernelopt resume {out}", stderr[-4000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr and stderr.count("interrupted") == 1

    resumed = run_cli([kernelopt, "resume", str(out)], tmp_path, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert "continuing run" in resumed.stderr
    report, count = (out / "report.json").read_bytes(), len(verdicts(db))

    again = run_cli([kernelopt, "resume", str(out)], tmp_path)
    assert again.returncode == 0, again.stderr[-4000:]
    assert f"{out}: this run is finished" in again.stderr, again.stderr
    assert "[1/5]" not in again.stderr
    assert (out / "report.json").read_bytes() == report and len(verdicts(db)) == count

    # inspect reads a standalone run back (its module is the kernel file, not an Inductor output module)
    inspect = run_cli([kernelopt, "inspect", str(out)], tmp_path)
    assert inspect.returncode == 0, inspect.stderr
    assert "gelu_kernel" in inspect.stdout and "Launches" in inspect.stdout, inspect.stdout


def test_the_kernel_search_allowance_is_said_recorded_for_resume_and_checked(kernelopt, tmp_path):
    """--search-seconds: the progress line names it, options.json keeps it (resume reads it back), and a negative
    value is one line. (The allowance ending a search is tests/unit/test_engine_search.cpp's: no timed test.)"""
    out = tmp_path / "run"
    proc = run_cli(kernel_argv(kernelopt, TARGET, out, tmp_path / "ws", "--search-seconds", "600"), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "within 600 s (--search-seconds)" in proc.stderr, proc.stderr[-3000:]
    assert json.loads((out / "options.json").read_text())["search_seconds"] == 600
    bad = run_cli(kernel_argv(kernelopt, TARGET, tmp_path / "bad", tmp_path / "ws", "--search-seconds", "-1"), tmp_path)
    assert one_line(bad).startswith("kernelopt: error: --search-seconds: Value -1 not in range"), bad.stderr
