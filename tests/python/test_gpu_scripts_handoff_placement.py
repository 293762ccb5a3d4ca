"""bench/gpu/handoff.py and bench/gpu/channels_last_placement.py run for real on the CPU (their timings mean
nothing there and are not compared): each writes its figures for every variant it names."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONV = os.path.join(ROOT, "tests", "gpu", "problems_tiny_conv.py")
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))


def run(script, *args):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu", script), *args, "--device", "cpu"],
                          capture_output=True, text=True, timeout=600, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout


def test_handoff_times_each_way_of_calling():
    record, out = run("handoff.py", CONV, "--calls", "3")
    figures = record["host_us_per_call"]
    assert set(figures["add"]) == {"direct", "autotuning_thread", "bare_thread"}
    assert set(figures["model"]) == {"direct", "bare_thread", "cudnn_benchmarked"}
    assert all(v > 0 for row in figures.values() for v in row.values())
    assert out.startswith("add: direct")


def test_channels_last_placement_times_the_three_places_and_records_a_failing_problem(tmp_path):
    missing = str(tmp_path / "missing.py")
    record, out = run("channels_last_placement.py", CONV, missing, "--trials", "2")
    row = record["problems"][CONV]
    assert set(row["speedup"]) == {"converted_once", "converted_in_call", "converted_in_graph"}
    assert all(v > 0 for v in row["ms"].values())
    assert all(d < 1e-4 for d in row["max_abs_diff_vs_default"].values())  # the same network, three layouts
    assert "error" in record["problems"][missing]
    assert "problems_tiny_conv.py: converted_once" in out
