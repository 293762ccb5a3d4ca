"""The device running out of memory, injected (KERNELOPT_FAULT_OOM=OP[:N]) so that a CPU machine can test
what an H200 meets at 6-16 GB inputs: the worker names it (kind "out_of_memory", the op) and gives the
memory back; the engine retries on one seed; a run whose end-to-end check still cannot run exits non-zero
with one line on stderr and a report that says the check did not run (the bench's `failed`, never
`incorrect`). Real binary, real worker, TRITON_INTERPRET=1.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.path.join(ROOT, "tests", "adversarial", "targets", "gelu_special.py")


def run(kernelopt, tmp_path, fault):
    env = dict(os.environ, TRITON_INTERPRET="1", KERNELOPT_FAULT_OOM=fault)
    out = tmp_path / "run"
    proc = subprocess.run([kernelopt, "optimize-kernel", TARGET, "--out", str(out), "--workspace", str(tmp_path / "ws"),
                           "--device", "cpu", "--budget", "1", "--trials", "10", "--timeout", "300"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    return proc, out


def test_worker_names_an_out_of_memory_error_and_keeps_serving():
    env = dict(os.environ, KERNELOPT_FAULT_OOM="echo:1", PYTHONPATH=os.path.join(ROOT, "python"))
    lines = "\n".join(json.dumps({"id": i, "op": "echo", "args": {"n": i}}) for i in (1, 2)) + "\n"
    proc = subprocess.run([sys.executable, "-m", "kernelopt.worker.server"], input=lines, env=env,
                          capture_output=True, text=True, timeout=120)
    first, second = [json.loads(line) for line in proc.stdout.splitlines()]
    assert first["ok"] is False and first["kind"] == "out_of_memory", first
    assert first["error"].startswith("out of memory in echo: MemoryError: injected"), first
    assert second == {"id": 2, "ok": True, "result": {"echo": {"n": 2}}}


def test_a_check_that_never_fits_exits_non_zero_and_says_it_did_not_run(kernelopt, tmp_path):
    proc, out = run(kernelopt, tmp_path, "final_check")
    assert proc.returncode == 4, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last == ("kernelopt: the end-to-end check could not run (out of memory: final_check); "
                    "the baseline was kept, unverified"), last
    assert "final_check ran out of the device's memory on 3 seeds; retrying on seed 1000 alone" in proc.stderr
    e2e = json.loads((out / "report.json").read_text())["end_to_end"]
    assert e2e["ran"] is False and e2e["passed"] is False, e2e
    assert e2e["failure"] == "out of memory: final_check", e2e


def test_a_check_that_fits_on_one_seed_is_retried_and_passes(kernelopt, tmp_path):
    proc, out = run(kernelopt, tmp_path, "final_check:1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "retrying on seed 1000 alone" in proc.stderr
    e2e = json.loads((out / "report.json").read_text())["end_to_end"]
    assert e2e["ran"] is True and e2e["passed"] is True and e2e["failure"] == "", e2e


def test_memory_accounting_is_present_and_consistent(kernelopt, tmp_path):
    proc, out = run(kernelopt, tmp_path, "")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    memory, requests = report["memory"], report["cost"]["requests"]
    # on the CPU no op's device peak is measured: null everywhere, never a made-up 0
    assert memory["peak_gb"] is None and memory["factor"] is None, memory
    assert all(r["peak_gb"] is None for r in requests.values()), requests
    assert {"peak_gb", "peak_op", "peak_gb_by_op", "working_set_gb", "factor", "method"} <= memory.keys()
    assert memory["peak_gb_by_op"] == {}  # only measured peaks are listed
    # the store keeps the run's memory with its summary (real SQLite, as the engine wrote it)
    import sqlite3
    with sqlite3.connect(tmp_path / "ws" / "store.db") as db:
        (summary,) = db.execute("SELECT summary_json FROM runs WHERE status = 'done'").fetchone()
    assert json.loads(summary)["memory"] == memory
