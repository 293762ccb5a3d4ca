"""The kernel library on a GPU: optimize examples/softmax.py, then compile the same model with
plain torch.compile through kernelopt.compile(model, library=...) and check that the library's
kernel was substituted and the output matches eager PyTorch."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "tools", "kernelopt", "kernelopt")


def test_optimize_then_compile_with_the_library(tmp_path):
    import torch
    import kernelopt
    from kernelopt.problem import build_model, load_problem, make_inputs

    if not os.path.isfile(BINARY):
        pytest.skip(f"{BINARY} is not built (scripts/build.sh)")
    problem = os.path.join(ROOT, "examples", "softmax.py")
    library = tmp_path / "team.kolib"
    r = subprocess.run([BINARY, "optimize", problem, "--out", str(tmp_path / "run"), "--workspace",
                        str(tmp_path / "ws"), "--library", str(library), "--budget", "12", "--trials", "30"],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-4000:]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["end_to_end"]["passed"], report["end_to_end"]
    if not report["summary"]["improved"]:
        pytest.skip("the run kept the baseline (no verified winner on this GPU), so the library is empty: "
                    + report["summary"]["headline"])
    written = report["library"]["written"]
    assert written and written[0]["result"] == "added", report["library"]

    mod = load_problem(problem)
    model = build_model(mod, problem, "cuda")
    x = make_inputs(mod, problem, 123, "cuda")[0]
    torch._dynamo.reset()
    backend = kernelopt.backend(str(library))
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        got = compiled(x)
        expected = model(x)
    assert [name for name, _ in backend.used] == [written[0]["kernel"]], backend.used
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    torch._dynamo.reset()
    with torch.no_grad():
        again = kernelopt.compile(model, library=str(library))(x)
    torch.testing.assert_close(again, expected, atol=1e-4, rtol=1e-4)
