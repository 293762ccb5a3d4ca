"""The real `kernelopt` binary on bad input: one clear line on stderr, a non-zero exit, no
traceback, and nothing of the user's overwritten.

Runs on any machine. The problem-file errors are checked by the worker before it looks for
a GPU, so they read the same with or without one; the no-GPU case needs a machine without one.
"""
import os
import re
import signal
import subprocess
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "tools", "kernelopt", "kernelopt")
USER_ERROR = 2  # tools/kernelopt/main.cpp: UserError and command-line errors

GOOD = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
"""


def _cuda_available():
    import torch
    return torch.cuda.is_available()


@pytest.fixture(scope="session")
def kernelopt():
    """The engine binary, built with scripts/build.sh when it is not there yet."""
    if not os.path.isfile(BINARY):
        build = subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], capture_output=True, text=True)
        assert build.returncode == 0, f"scripts/build.sh failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    assert os.access(BINARY, os.X_OK), f"{BINARY} is missing after scripts/build.sh"
    return BINARY


@pytest.fixture
def cli(kernelopt, tmp_path):
    """Runs kernelopt in tmp_path; optimize gets a --workspace there."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)  # conftest sets it for this process; a user's run has none

    def run(*args, workspace=True):
        argv = [kernelopt, *map(str, args)]
        if workspace and args and args[0] == "optimize":
            argv += ["--workspace", str(tmp_path / "ws")]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    return run


def write(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def one_error_line(proc, *needles, code=USER_ERROR):
    """proc failed with `code`, printing exactly one `kernelopt: error:` line naming each needle."""
    assert proc.returncode == code, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert proc.stdout == "", proc.stdout
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.endswith("\n"), f"not one line:\n{proc.stderr}"
    line = proc.stderr.rstrip("\n")
    assert line.startswith("kernelopt: error: "), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    # a sentence for the user, not an exception's repr (the user's own exception may be quoted inside)
    assert not re.match(r"kernelopt: error: \w+(Error|Exception): ", line), line
    for internal in ("ProblemError", "ArtifactError", "NoGpuError", "CaptureError"):
        assert internal not in line, line
    return line


# --- the model file -------------------------------------------------------------------------

def test_missing_model_file(cli, tmp_path):
    proc = cli("optimize", "missing.py", "--out", tmp_path / "run")
    one_error_line(proc, "missing.py", "no such file")
    assert not (tmp_path / "run").exists()


def test_syntax_error(cli, tmp_path):
    path = write(tmp_path, "import torch\n\nclass Model(torch.nn.Module:\n    pass\n")
    proc = cli("optimize", path, "--out", tmp_path / "run")
    one_error_line(proc, f"{path}:3: syntax error")


def test_no_model(cli, tmp_path):
    path = write(tmp_path, GOOD.replace("class Model(", "class Net("))
    proc = cli("optimize", path, "--out", tmp_path / "run")
    line = one_error_line(proc, str(path), "`Model`")
    assert "defines no" in line


def test_get_inputs_raising(cli, tmp_path):
    path = write(tmp_path, GOOD.replace("return [torch.randn(8, 32)]",
                                        "raise ValueError('dim must be even\\nsecond line')"))
    proc = cli("optimize", path, "--out", tmp_path / "run")
    line = one_error_line(proc, str(path), "get_inputs()", "ValueError: dim must be even")
    assert "second line" not in line


def test_model_constructor_raising(cli, tmp_path):
    path = write(tmp_path, GOOD.replace("class Model(nn.Module):\n",
                                        "class Model(nn.Module):\n    def __init__(self):\n"
                                        "        raise RuntimeError('weights.bin not found')\n\n"))
    proc = cli("optimize", path, "--out", tmp_path / "run")
    one_error_line(proc, str(path), "Model(*get_init_inputs())", "weights.bin not found")


@pytest.mark.skipif(_cuda_available(), reason="the no-GPU error needs a machine where no CUDA GPU is visible")
def test_no_gpu(cli, tmp_path):
    path = write(tmp_path, GOOD)
    proc = cli("optimize", path, "--out", tmp_path / "run")
    one_error_line(proc, "no CUDA GPU")


# --- the output directory -------------------------------------------------------------------

def test_out_dir_with_unrelated_files(cli, tmp_path):
    path = write(tmp_path, GOOD)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_bytes(b"my notes\n")
    proc = cli("optimize", path, "--out", out)
    one_error_line(proc, str(out), "not a kernelopt run")
    assert sorted(os.listdir(out)) == ["keep.txt"]
    assert (out / "keep.txt").read_bytes() == b"my notes\n"


def test_out_dir_holding_a_run_of_another_model(kernelopt, cli, tmp_path):
    # a run that got past validation claims its directory: a standalone kernel file, stopped once capturing
    first = tmp_path / "first.py"
    first.write_text(open(os.path.join(ROOT, "tests", "adversarial", "targets", "gelu_special.py")).read())
    out = tmp_path / "run"
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.Popen([kernelopt, "optimize-kernel", str(first), "--out", str(out), "--workspace",
                             str(tmp_path / "ws"), "--device", "cpu"], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stderr:
            if "[1/5] capturing" in line:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    marker = out / "kernelopt-run.json"
    assert marker.is_file()
    before = {p: (out / p).read_bytes() for p in ["kernelopt-run.json"]}
    listing = sorted(os.listdir(out))

    second = write(tmp_path, GOOD, name="second.py")
    proc = cli("optimize", second, "--out", out)
    one_error_line(proc, str(out), "different problem", str(first))
    assert {p: (out / p).read_bytes() for p in before} == before
    assert sorted(os.listdir(out)) == listing


def test_out_dir_with_an_unreadable_marker(cli, tmp_path):
    path = write(tmp_path, GOOD)
    out = tmp_path / "run"
    out.mkdir()
    (out / "kernelopt-run.json").write_text("{not json")
    proc = cli("optimize", path, "--out", out)
    one_error_line(proc, str(out), "kernelopt-run.json")
    assert (out / "kernelopt-run.json").read_text() == "{not json"
    assert os.listdir(out) == ["kernelopt-run.json"]


def test_out_path_is_a_regular_file(cli, tmp_path):
    path = write(tmp_path, GOOD)
    out = tmp_path / "results.txt"
    out.write_bytes(b"important\n")
    proc = cli("optimize", path, "--out", out)
    one_error_line(proc, str(out), "not a directory")
    assert out.read_bytes() == b"important\n"


# --- the command line -----------------------------------------------------------------------

@pytest.mark.parametrize("args, needles", [
    (["--seeds", "1", "2"], ["at least 3 distinct seeds"]),
    (["--seeds", "0", "0", "0"], ["at least 3 distinct seeds"]),
    (["--budget", "0"], ["--budget", "0"]),
    (["--atol", "-1"], ["--atol", "-1"]),
    (["--rtol", "-0.5"], ["--rtol", "-0.5"]),
    (["--atol", "tiny"], ["--atol", "tiny"]),
    (["--no-such-option"], ["--no-such-option"]),
    (["--gpus", "0"], ["--gpus 0", "whole number >= 1"]),
    (["--gpus", "two"], ["--gpus two", "whole number >= 1"]),
    (["--gpus", "2", "--device", "cuda:1"], ["--gpus 2 with --device cuda:1"]),
    (["--device", "tpu"], ["--device", "must be cuda, cuda:N or cpu, got tpu"]),
    (["--device", "cuda:x"], ["--device", "got cuda:x"]),
    (["--atol", "inf"], ["--atol", "must be a finite number", "inf"]),
    (["--rtol", "inf"], ["--rtol", "must be a finite number", "inf"]),
    (["--atol", "1e400"], ["--atol", "must be a finite number", "1e400"]),
    (["--llm", "openai:m", "--llm-base-url", "file:///etc/passwd?"], ["base_url", "http:// or https://"]),
    (["--llm", "openai:m", "--llm-option", "base_url=gopher://example.com"], ["base_url", "http:// or https://"]),
])
def test_bad_option_values(cli, tmp_path, args, needles):
    path = write(tmp_path, GOOD)
    proc = cli("optimize", path, "--out", tmp_path / "run", *args)
    line = one_error_line(proc, *needles)
    assert len(line) < 200, line
    assert not (tmp_path / "run").exists()


def test_no_subcommand(cli):
    one_error_line(cli(), "subcommand")


def test_mistyped_command_is_named_with_the_commands_there_are(cli):
    one_error_line(cli("optimise", "model.py"), "unknown command 'optimise'", "commands: optimize, optimize-kernel")


def test_a_directory_as_the_model_says_it_is_a_directory(cli, tmp_path):
    proc = cli("optimize", tmp_path, "--out", tmp_path / "run")
    one_error_line(proc, str(tmp_path), "a directory, not a Python file")
    assert not (tmp_path / "run").exists()


def test_bench_device_is_checked_as_optimize_checks_it(cli, tmp_path):
    (tmp_path / "problems").mkdir()
    proc = cli("bench", tmp_path / "problems", "--out", tmp_path / "bench", "--device", "tpu")
    one_error_line(proc, "--device", "must be cuda, cuda:N or cpu, got tpu")
    assert not (tmp_path / "bench").exists()


def test_a_kernelopt_pythonpath_that_does_not_exist_is_an_error(kernelopt, tmp_path):
    path = write(tmp_path, GOOD)
    env = dict(os.environ, KERNELOPT_PYTHONPATH=str(tmp_path / "nonexistent"))
    proc = subprocess.run([kernelopt, "optimize", str(path), "--out", str(tmp_path / "run"), "--workspace",
                           str(tmp_path / "ws")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    one_error_line(proc, "KERNELOPT_PYTHONPATH", str(tmp_path / "nonexistent"), "python/ directory")
    assert not (tmp_path / "run").exists()


def test_help_still_succeeds(cli):
    proc = cli("optimize", "--help")
    assert proc.returncode == 0 and "--out" in proc.stdout


def test_inspect_missing_path(cli, tmp_path):
    proc = cli("inspect", tmp_path / "nothing_here")
    one_error_line(proc, "nothing_here", "no such file")


def test_inspect_code_on_a_file_that_is_not_inductor_output(cli, tmp_path):
    path = write(tmp_path, "x = 1\n", name="plain.py")
    proc = cli("inspect", "--code", path)
    one_error_line(proc, str(path), "not an Inductor output module")
    assert path.read_text() == "x = 1\n"


def test_inspect_code_on_a_binary_file(cli, tmp_path):
    path = tmp_path / "blob.py"
    path.write_bytes(b"\xff\xfe\x00binary")
    proc = cli("inspect", "--code", path)
    one_error_line(proc, str(path), "not an Inductor output module")
