"""The adversarial suite (tests/adversarial) through the real engine on the CPU, under
TRITON_INTERPRET=1: `kernelopt bench --adversarial` runs every case that the interpreter can
show, each as a candidate of a scripted Coder answer (relay provider), and each must be caught
by the gate its manifest names; the controls must pass every gate; no host-code case may leave
its marker file (none of its code ran). GPU-only cases are skipped, with the reason, by the
command itself.

Not a timed test: timings under the interpreter are noise; the targets are built so that every
one-pass candidate is several times faster than the original, and what is asserted is which
gate caught what.
"""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADVERSARIAL = os.path.join(ROOT, "tests", "adversarial")



def manifest():
    with open(os.path.join(ADVERSARIAL, "cases.json")) as f:
        return json.load(f)


def test_manifest_names_a_file_gate_and_reason_for_every_case():
    m = manifest()
    cases = m["cases"]
    assert len({c["name"] for c in cases}) == len(cases) >= 25
    files = {f[:-4] for f in os.listdir(os.path.join(ADVERSARIAL, "cases")) if f.endswith(".txt")}
    assert files == {c["name"] for c in cases}
    for c in cases:
        assert c["target"] in m["targets"] and c["why"], c
        assert c["expected"] in {"static", "compile", "correctness", "model", "performance", "timeout",
                                 "worker-crash", "passed"}, c
        assert c.get("gpu_only", False) == c["name"].startswith("g_"), c  # the g_ prefix marks GPU-only cases
        if c["name"].startswith("h_"):  # host code: would leave a marker if any of it ran
            assert c["expected"] == "static" and c["marker"] in open(
                os.path.join(ADVERSARIAL, "cases", c["name"] + ".txt")).read(), c
    for t in m["targets"].values():
        assert os.path.isfile(os.path.join(ADVERSARIAL, t["file"]))


@pytest.mark.parametrize("manifest_text, needle", [
    (None, "cases.json: no such file"),
    ("[]", "want a JSON object"),
    ('{"targets": {"t": {"file": "t.py", "kernel": "k"}}, "cases": [{"name": "x", "target": "t", '
     '"expected": "gate9", "why": "w"}]}', "unknown expected gate 'gate9'"),
    ('{"targets": {}, "cases": [{"name": "x", "target": "nowhere", "expected": "static", "why": "w"}]}',
     "unknown target 'nowhere'"),
    ('{"targets": {"t": {"file": "t.py", "kernel": "k"}}, "cases": [{"name": "x", "target": "t", '
     '"expected": "static", "why": "w"}]}', "cases/x.txt: no such file"),
    ('{"targets": {}, "groups": {"faults": {"timeout_s": "soon"}}, "cases": []}', "group faults: want an object"),
])
def test_bad_manifest_is_one_clear_line(kernelopt, tmp_path, manifest_text, needle):
    if manifest_text is not None:
        (tmp_path / "cases.json").write_text(manifest_text)
    proc = subprocess.run([kernelopt, "bench", "--adversarial", str(tmp_path), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("kernelopt: error: "), proc.stderr
    assert needle in proc.stderr, proc.stderr


def test_bench_without_a_directory_says_so(kernelopt, tmp_path):
    proc = subprocess.run([kernelopt, "bench", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith("kernelopt: error: bench: give the directory"), proc.stderr


def test_every_cpu_case_is_caught_by_its_gate_and_the_controls_pass(kernelopt, tmp_path):
    m = manifest()
    out = tmp_path / "adv"
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([kernelopt, "bench", "--adversarial", ADVERSARIAL, "--out", str(out), "--device", "cpu",
                           "--trials", "10", "--timeout", "300"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500)
    table = proc.stdout
    result = json.loads((out / "adversarial.json").read_text())
    rows = {r["case"]: r for r in result["cases"]}
    assert set(rows) == {c["name"] for c in m["cases"]}

    wrong = [(n, r["expected"], r["caught_by"], r["reason"]) for n, r in rows.items() if r["result"] == "FAIL"]
    assert not wrong, f"{wrong}\n{table}\n{proc.stderr[-3000:]}"
    for c in m["cases"]:
        r = rows[c["name"]]
        if c.get("gpu_only"):
            assert r["result"] == "SKIP" and "needs a GPU" in r["reason"], r
        else:
            assert r["result"] == "PASS" and r["caught_by"] == c["expected"], r
            assert r["reason"], r  # the reason the gate recorded
    assert proc.returncode == 0, proc.stderr[-3000:]

    # host code never ran: no marker file anywhere it could have been written
    for c in m["cases"]:
        if "marker" in c:
            assert not os.path.exists(c["marker"]), c["name"]
    # the worker hung once and crashed once, was restarted each time, and the run went on
    faults = {rows["a_hang"]["run"], rows["a_wild_read"]["run"]}
    assert len(faults) == 1 and rows["a_control_after_faults"]["run"] in faults
    assert rows["a_control_after_faults"]["caught_by"] == "passed"
    assert proc.stderr.count("starting a fresh worker") >= 2, proc.stderr[-3000:]

    s = result["summary"]
    assert s["failed"] == 0 and s["host_code_markers"] == 0
    assert s["caught_as_expected"] == s["adversarial_tried"] >= 25
    assert s["controls_passed"] == s["controls"] >= 2
    md = (out / "adversarial.md").read_text()
    assert "| case | target | expected gate | caught by | result | reason |" in md
    for name in rows:
        assert f"| {name} |" in md and name in table
