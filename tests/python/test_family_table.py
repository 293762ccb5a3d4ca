"""bench/family_table.py: the per-family before/after bandwidth table from a bench's kernel rows."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "family_table.py")
spec = importlib.util.spec_from_file_location("family_table", SCRIPT)
family_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(family_table)


def kernel(status, family, before, after, gb, bound="memory", origin=None):
    return {"status": status, "family": family, "before_ms": before, "after_ms": after, "bytes": gb * 1e9,
            "bound": bound, "origin": origin or ("rewrite" if family else "tuner")}


# 1000 GB/s: 1 GB takes 1 ms at the limit
BENCH = {"problems": [
    {"problem": "level1/a.py", "roofline": {"bandwidth_gbps": 1000.0}, "kernels": [
        kernel("improved", "window_rows", 4.0, 2.0, 2), kernel("skipped", None, 1.0, 1.0, 1)]},
    {"problem": "level1/b.py", "roofline": {"bandwidth_gbps": 1000.0}, "kernels": [
        kernel("improved", "window_rows", 2.0, 1.0, 1), kernel("improved", None, 3.0, 2.0, 2),
        kernel("improved", "x", 9.0, 1.0, 1, bound="compute"),
        kernel("improved", None, 2.0, 1.0, 1, origin="library")]}]}


def test_kernels_are_grouped_by_family_and_their_bytes_over_time_before_and_after():
    rows = family_table.table([BENCH])
    assert set(rows) == {"window_rows", "tuner", "library", "baseline kept"}
    w = rows["window_rows"]
    assert w["kernels"] == 2 and w["problems"] == ["level1/a.py", "level1/b.py"]
    assert w["fraction_before"] == pytest.approx(3 / 6) and w["fraction_after"] == pytest.approx(3 / 3)
    assert w["median_kernel_speedup"] == pytest.approx(2.0)
    assert rows["tuner"]["fraction_after"] == pytest.approx(1.0)  # improved with no family: a launch config
    assert rows["baseline kept"]["kernels"] == 1


def test_each_kernel_is_held_to_its_own_problems_bandwidth_and_kernels_without_bytes_are_left_out():
    fast_gpu = {"problem": "level1/c.py", "roofline": {"bandwidth_gbps": 2000.0},
                "kernels": [kernel("improved", "window_rows", 2.0, 1.0, 2)]}  # limit 1 ms: 50% -> 100%
    slow_gpu = {"problem": "level1/d.py", "roofline": {"bandwidth_gbps": 1000.0},
                "kernels": [kernel("improved", "window_rows", 4.0, 2.0, 2),  # limit 2 ms: 50% -> 100%
                            kernel("improved", "window_rows", 4.0, 2.0, 0)]}  # no bytes: no fraction to give
    w = family_table.table([{"problems": [fast_gpu]}, {"problems": [slow_gpu]}])["window_rows"]
    assert w["kernels"] == 2
    assert w["fraction_before"] == pytest.approx(0.5) and w["fraction_after"] == pytest.approx(1.0)


def test_rows_without_the_family_field_count_as_unknown():
    old = {"problems": [{"problem": "p.py", "roofline": {"bandwidth_gbps": 1000.0},
                         "kernels": [{"status": "improved", "before_ms": 2.0, "after_ms": 1.0, "bytes": 1e9,
                                      "bound": "memory"}]}]}
    assert set(family_table.table([old])) == {"unknown"}


def test_the_command_prints_the_table_and_fails_clearly_on_a_bad_file(tmp_path):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BENCH))
    out = subprocess.run([sys.executable, SCRIPT, str(path)], capture_output=True, text=True)
    assert out.returncode == 0
    assert "| window_rows | 2 | 2 | 50% → 100% | 2.000x |" in out.stdout
    assert out.stdout.index("window_rows") < out.stdout.index("baseline kept")
    bad = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and "missing.json" in bad.stderr
