"""bench/gpu/modes.py, the survey of torch.compile's modes, run for real on the CPU (a tiny problem, the default
mode only: CUDA graphs need a GPU; the wall-clock timings mean nothing and are not asserted)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "gpu", "modes.py")
TINY = os.path.join(ROOT, "tests", "gpu", "problems_tiny_softmax.py")


def test_modes_survey_records_each_mode_and_what_it_could_not_reach(tmp_path):
    missing = str(tmp_path / "missing_problem.py")
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path), TINY, missing, "--device", "cpu",
                           "--modes", "default,channels_last,no-such-mode+reduce-overhead,no-such-mode", "--trials", "2"], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.load(open(tmp_path / "modes.json"))
    assert record["modes"][0] == "default" and record["device"] == "cpu"
    tiny = record["problems"]["gpu/problems_tiny_softmax.py"]
    assert tiny["eager_ms"] > 0 and tiny["modes"]["default"]["ms"] > 0
    assert tiny["modes"]["default"]["compile_s"] >= 0
    # channels_last: a mode extra, its own compile
    assert tiny["modes"]["channels_last"]["ms"] > 0
    assert record["cudnn_benchmark"] is False and tiny["cudnn_benchmark"] is False
    assert tiny["threads"] == []  # no mode with cudnn_benchmark: all on this thread
    assert "one torch.compile mode at most" in tiny["modes"]["no-such-mode+reduce-overhead"]["error"]
    # a mode torch.compile refuses is that mode's error, not the problem's
    assert "Unrecognized mode=no-such-mode" in tiny["modes"]["no-such-mode"]["error"]
    assert "ms" not in tiny["modes"]["no-such-mode"]
    # a problem that cannot load is its row's error; the survey goes on
    assert record["problems"][f"{tmp_path.name}/missing_problem.py"]["error"].startswith("exit 1")
    assert "gpu/problems_tiny_softmax.py: eager" in proc.stdout


def test_cudnn_benchmark_is_the_whole_surveys_setting(tmp_path):
    # PyTorch keeps one cuDNN plan per convolution for the process: the flag is a survey's, recorded with it
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path), TINY, "--device", "cpu", "--modes", "default",
                           "--trials", "2", "--cudnn-benchmark"], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.load(open(tmp_path / "modes.json"))
    assert record["cudnn_benchmark"] is True
    row = record["problems"]["gpu/problems_tiny_softmax.py"]
    assert row["modes"]["default"]["ms"] > 0 and row["cudnn_benchmark"] is True


def test_a_cudnn_benchmark_mode_runs_on_a_thread_of_its_own_and_the_others_on_the_callers(tmp_path):
    # cuDNN's plans are per thread: a mode with +cudnn_benchmark has a thread of its own, whose handoff is its
    # cost; the others run as a user runs them (the flag is the process's again after that mode's first call)
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path), TINY, "--device", "cpu", "--modes",
                           "default,default+cudnn_benchmark,channels_last+cudnn_benchmark", "--trials", "2"],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = json.load(open(tmp_path / "modes.json"))["problems"]["gpu/problems_tiny_softmax.py"]
    assert row["threads"] == ["default+cudnn_benchmark", "channels_last+cudnn_benchmark"]
    assert row["cudnn_benchmark"] is False
    for mode in ("default", "default+cudnn_benchmark", "channels_last+cudnn_benchmark"):
        assert row["modes"][mode]["ms"] > 0, row["modes"][mode]
    assert "default+cudnn_benchmark" in proc.stdout


def test_settings_of_mode_extras():
    sys.path.insert(0, os.path.dirname(SCRIPT))
    from modes import settings_of
    assert settings_of("default+cudnn_benchmark") == {"cudnn_benchmark": True}
    assert settings_of("cudnn_benchmark+channels_last") == {"channels_last": True, "cudnn_benchmark": True}
    assert settings_of("max-autotune-no-cudagraphs+cudnn_benchmark") == {"mode": "max-autotune-no-cudagraphs",
                                                                         "cudnn_benchmark": True}
