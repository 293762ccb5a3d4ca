"""bench/survey_ceiling.py: the ceiling of kernel rewrites from a survey record (the bench's definition)."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "survey_ceiling.py")
spec = importlib.util.spec_from_file_location("survey_ceiling", SCRIPT)
survey_ceiling = importlib.util.module_from_spec(spec)
spec.loader.exec_module(survey_ceiling)


def kernel(ms, gb):
    return {"ms": ms, "bytes": gb * 1e9}


def record(problems):
    return {"problems": problems}


# 1000 GB/s = 1e9 bytes per ms: a kernel of 2 GB takes 2 ms at its limit.
ROW = {"modules": [{"module_ms": 10.0, "bandwidth_gbps": 1000.0,
                    "kernels": [kernel(4.0, 2), kernel(1.0, 2)]}]}


def test_ceiling_counts_only_time_above_each_kernels_limit():
    c, call, triton = survey_ceiling.problem_ceiling(ROW)
    # the first kernel saves 2 ms, the second is faster than its byte count allows and saves nothing
    assert (call, triton) == (10.0, 5.0)
    assert c == pytest.approx(10.0 / 8.0)


def test_levels_geomean_and_problems_without_triton():
    none = {"modules": [{"module_ms": 3.0, "bandwidth_gbps": 1000.0, "kernels": []}]}
    s = survey_ceiling.summarize([record({"level1/a.py": ROW, "level1/b.py": none,
                                          "level1/c.py": {"error": "out of memory"}})])
    lvl = s["levels"]["level1"]
    assert lvl["with_triton"] == 1 and lvl["problems"] == 2
    assert lvl["geomean_with_triton"] == pytest.approx(1.25)
    assert lvl["geomean_all"] == pytest.approx(1.25 ** 0.5)
    assert s["not_surveyed"] == ["level1/c.py"]


def test_a_later_record_replaces_a_problem(tmp_path):
    fast = {"modules": [{"module_ms": 10.0, "bandwidth_gbps": 1000.0, "kernels": [kernel(2.0, 2)]}]}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(record({"level2/x.py": ROW})))
    b.write_text(json.dumps(record({"level2/x.py": fast})))
    out = tmp_path / "s.json"
    proc = subprocess.run([sys.executable, SCRIPT, str(a), str(b), "--json", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["rows"]["level2/x.py"]["ceiling"] == pytest.approx(1.0)


def test_unreadable_record_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot read" in proc.stderr
