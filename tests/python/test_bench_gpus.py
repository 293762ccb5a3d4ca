"""`kernelopt bench --gpus N`: the real binary starts N child benches, each with its share of the problems,
its own directory (OUT/gpuI), log (OUT/gpuI.log) and store (WORKSPACE/gpuI), and merges them into OUT.

Runs on any machine with `--device cpu` (N processes on the CPU, under TRITON_INTERPRET=1 as conftest sets).
A KernelBench module cannot be optimized end to end on the CPU (the profile needs CUDA), so the problems
whose rows must be correct have a finished run already in the directory of the child the partition gives
them: the real report.json of an H200 run (tests/fixtures/reports). A child reads a finished run back
instead of running it; had a problem gone to the other child, that child would run it for real and,
every problem's get_inputs() raising, its row would say "failed". One problem has no finished run and
really goes through its child's worker, which reports get_inputs()'s error: a failed row, as on a GPU.
"""
import json
import os
import shutil
import subprocess
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "tests", "fixtures", "reports", "softmax_h200.report.json")

PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    raise ValueError({message!r})


def get_init_inputs():
    return []
"""

# Sorted a, b, c: with --gpus 2 (shard 1/1), child 1 takes shard 1/2 (a, c) and child 2 shard 2/2 (b).
FINISHED = {"level1/a_softmax": "gpu1", "level1/b_softmax": "gpu2"}
RUN_FOR_REAL = "level1/c_relu"


def _bench(kernelopt, tmp, *extra):
    argv = [kernelopt, "bench", str(tmp / "problems"), "--out", str(tmp / "out"), "--workspace", str(tmp / "ws"),
            "--device", "cpu", "--budget", "2", "--trials", "10", "--timeout", "300", *extra]
    return subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def spread(kernelopt, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench_gpus")
    for name in [*FINISHED, RUN_FOR_REAL]:
        path = tmp / "problems" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(PROBLEM.format(message=f"{name}: not to be run here")))
    for name, child in FINISHED.items():
        run = tmp / "out" / child / "runs" / name
        run.mkdir(parents=True)
        shutil.copy(REPORT, run / "report.json")
    first = _bench(kernelopt, tmp, "--gpus", "2")
    return tmp, first


def test_children_write_their_own_bench_and_log(spread):
    tmp, proc = spread
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    out = tmp / "out"
    expected = {"gpu1": ("1/2", ["level1/a_softmax.py", "level1/c_relu.py"]), "gpu2": ("2/2", ["level1/b_softmax.py"])}
    for child, (shard, problems) in expected.items():
        bench = json.loads((out / child / "bench.json").read_text())
        assert bench["shard"] == shard
        assert [r["problem"] for r in bench["problems"]] == problems
        log = (out / f"{child}.log").read_text()
        assert f"=== {child} (cpu, shard {shard}): " in log  # the parent's header: the child's command line
        assert "geomean" in log  # the child's stdout, teed by the parent
        assert f"{child} (cpu, shard {shard}): finished in" in proc.stderr  # one progress line per child
    assert "3 problems from 2 of 2 child benches" in proc.stdout
    assert (tmp / "ws" / "gpu1" / "store.db").is_file()  # the child that ran a problem: its own store
    assert not (tmp / "ws" / "store.db").exists()


def test_merged_bench_has_every_problem_once(spread):
    tmp, _ = spread
    merged = json.loads((tmp / "out" / "bench.json").read_text())
    assert merged["shard"] == "1/1"
    assert [m["dir"] for m in merged["merged_from"]] == [str(tmp / "out" / "gpu1"), str(tmp / "out" / "gpu2")]
    rows = {r["problem"]: r for r in merged["problems"]}
    assert sorted(rows) == ["level1/a_softmax.py", "level1/b_softmax.py", "level1/c_relu.py"]
    assert len(merged["problems"]) == 3
    for name in FINISHED:
        row = rows[f"{name}.py"]
        assert row["correct"] is True and row["status"] == "improved", row  # read back: the partition placed it
    real = rows[f"{RUN_FOR_REAL}.py"]
    assert real["status"] == "failed" and "not to be run here" in real["error"], real  # the child's worker ran it
    assert merged["aggregate"]["overall"]["incorrect"] == 0
    assert (tmp / "out" / "bench.md").is_file() and (tmp / "out" / "bench.html").is_file()


def test_rerun_resumes_every_child(kernelopt, spread):
    tmp, _ = spread
    proc = _bench(kernelopt, tmp, "--gpus", "2")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    for name, child in FINISHED.items():
        assert "finished earlier; reusing" in (tmp / "out" / f"{child}.log").read_text()
    merged = json.loads((tmp / "out" / "bench.json").read_text())
    assert sorted(r["problem"] for r in merged["problems"]) == ["level1/a_softmax.py", "level1/b_softmax.py",
                                                                "level1/c_relu.py"]


@pytest.mark.parametrize("gpus, message", [
    (["--gpus", "0"], "--gpus 0: want all or a whole number >= 1"),
    (["--gpus", "x"], "--gpus x: want all or a whole number >= 1"),
    (["--gpus=-2"], "--gpus -2: want all or a whole number >= 1"),
])
def test_bad_gpus_value_is_a_one_line_error(kernelopt, tmp_path, gpus, message):
    (tmp_path / "problems").mkdir()
    proc = subprocess.run([kernelopt, "bench", str(tmp_path / "problems"), "--out", str(tmp_path / "out"), *gpus],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"kernelopt: error: {message}"], proc.stderr
    assert not (tmp_path / "out").exists()


def test_more_gpus_than_visible_is_a_one_line_error(kernelopt, tmp_path):
    (tmp_path / "problems").mkdir()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([kernelopt, "bench", str(tmp_path / "problems"), "--out", str(tmp_path / "out"),
                           "--gpus", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "kernelopt: error: --gpus 2: 0 GPU(s) visible (CUDA_VISIBLE_DEVICES, else nvidia-smi -L)"], proc.stderr
