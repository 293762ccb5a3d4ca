"""`kernelopt optimize --gpus N`: one worker per GPU, the kernels of one run searched at once.

On the CPU (`--device cpu`, Triton's interpreter) `--gpus 2` is two workers, each a real worker
process with its own session, store connection and library connection. The tests check that both
kernels of a two-kernel file were searched, one by each worker, and that the candidates and the
verdicts that do not depend on timing are those of a one-worker run. Timings mean nothing here.
"""
import json
import os
import sqlite3
import subprocess

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TWO = os.path.join(ROOT, "tests", "fixtures", "standalone", "two_kernels.py")
ENV = dict(os.environ, TRITON_INTERPRET="1")
KERNELS = {"scale_kernel", "add_relu_kernel"}


def optimize(kernelopt, base, gpus):
    out, ws = base / f"run{gpus}", base / f"ws{gpus}"
    argv = [kernelopt, "optimize-kernel", TWO, "--out", str(out), "--workspace", str(ws), "--device", "cpu",
            "--budget", "4", "--trials", "10", "--timeout", "600", "--gpus", str(gpus)]
    run = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads((out / "report.json").read_text())
    kernels = {k["name"]: k for m in report["modules"] for k in m["kernels"]}
    return out, ws, report, kernels, run.stderr


def evidence(ws):
    """{kernel: sorted [(config, static passed)]} and [correctness verdicts] from the store. Which candidates
    reach gate 2 depends on the screen's timings, so those verdicts are returned apart."""
    out, correctness = {}, []
    with sqlite3.connect(ws / "store.db") as con:
        for kernel, cid, meta in con.execute("SELECT kernel, id, meta_json FROM candidates"):
            gates = dict(con.execute("SELECT gate, passed FROM verdicts WHERE candidate_id = ?", (cid,)).fetchall())
            config = json.dumps(json.loads(meta).get("config"), sort_keys=True)
            out.setdefault(kernel, []).append((config, gates.get("static")))
            if "correctness" in gates:
                correctness.append(gates["correctness"])
    return {k: sorted(v) for k, v in out.items()}, correctness


@pytest.fixture(scope="module")
def runs(kernelopt, tmp_path_factory):
    base = tmp_path_factory.mktemp("gpus")
    return optimize(kernelopt, base, 1), optimize(kernelopt, base, 2)


def test_two_workers_each_search_one_kernel(runs):
    _, (out, ws, report, kernels, log) = runs
    assert set(kernels) == KERNELS
    assert report["cost"]["workers"] == 2
    assert sorted(k["outcome"]["worker"] for k in kernels.values()) == [0, 1], kernels
    assert "2 kernel searches over 2 workers" in log
    assert (out / "logs" / "worker1.log").exists()  # the second worker is its own process, with its own log
    # both workers' requests are counted: each searched kernel was screened, so both compiled candidates
    assert report["cost"]["requests"]["start"]["requests"] >= 2, report["cost"]["requests"]
    assert "summed over 2 workers" in report["cost"]["method"]
    assert report["end_to_end"]["passed"], report["end_to_end"]


def test_one_worker_runs_as_before(runs):
    (out, ws, report, kernels, log), _ = runs
    assert report["cost"]["workers"] == 1
    assert all("worker" not in k["outcome"] for k in kernels.values()), kernels
    assert "over 2 workers" not in log and not (out / "logs" / "worker1.log").exists()


def test_the_same_candidates_meet_the_same_gates_on_one_or_two_workers(runs):
    (_, ws1, _, k1, _), (_, ws2, _, k2, _) = runs
    (e1, c1), (e2, c2) = evidence(ws1), evidence(ws2)
    assert set(e1) == KERNELS and e1 == e2
    assert all(static == 1 for cands in e2.values() for _, static in cands), e2
    assert all(c == 1 for c in c1 + c2), (c1, c2)  # a launch config changes no result
    for name in KERNELS:  # which configs the screen let through is timing, not a verdict to compare
        assert k1[name]["outcome"]["screened"] == k2[name]["outcome"]["screened"]
