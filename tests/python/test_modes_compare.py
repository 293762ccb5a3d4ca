"""bench/modes_compare.py: two modes.py surveys compared problem by problem (numbers only, CPU)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from modes_compare import compare  # noqa: E402


def survey(rows, cudnn=False):
    return {"cudnn_benchmark": cudnn, "problems": rows}


PLAIN = survey({"level3/04.py": {"modes": {"default": {"ms": 2.0}}},
                "level3/05.py": {"modes": {"default": {"ms": 3.0}}},
                "level3/06.py": {"error": "over --problem-timeout 35 s"},
                "level3/09.py": {"modes": {"default": {"error": "compile failed"}}}})
CUDNN = survey({"level3/04.py": {"modes": {"default": {"ms": 1.0}}},
                "level3/05.py": {"modes": {"default": {"ms": 4.0}}},
                "level3/09.py": {"modes": {"default": {"ms": 1.5}}},
                "level3/11.py": {"modes": {"default": {"ms": 1.0}}}}, cudnn=True)


def test_only_problems_both_timed_are_compared():
    c = compare(PLAIN, CUDNN)
    assert [r[0] for r in c["rows"]] == ["level3/04.py", "level3/05.py"]
    assert c["rows"][0][3] == 2.0 and c["rows"][1][3] == 0.75
    assert abs(c["geomean"] - (2.0 * 0.75) ** 0.5) < 1e-12
    assert c["only_after"] == ["level3/09.py", "level3/11.py"] and c["only_before"] == []


def test_the_cli_prints_the_table_and_a_bad_file_is_one_line(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(PLAIN))
    b.write_text(json.dumps(CUDNN))
    script = os.path.join(ROOT, "bench", "modes_compare.py")
    out = subprocess.run([sys.executable, script, str(a), str(b)], capture_output=True, text=True)
    assert out.returncode == 0
    assert "| level3/04.py | 2.000 | 1.000 | 2.000x |" in out.stdout
    assert "default ms (cudnn.benchmark)" in out.stdout and "geomean over 2 problems: 1.225x" in out.stdout
    bad = subprocess.run([sys.executable, script, str(a), str(tmp_path / "missing.json")], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
