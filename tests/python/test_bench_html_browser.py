"""bench.html from the real `kernelopt bench`, rendered by headless Chromium: the page's script
runs to the end (body[data-ready="1"]), the speedup plot has one bar per problem, user text
is escaped, and a screenshot comes out.

Runs on any machine: every problem's get_inputs() raises, which the worker reports before it
looks for a GPU, so each problem fails the same way with or without one and bench.html is
written with 3 failed bars. Needs `chromium` (scripts/setup.sh installs it); fails without.
"""
import os
import re
import shutil
import subprocess
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "tools", "kernelopt", "kernelopt")

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

MESSAGES = {
    "a_relu.py": "<script>alert(1)</script>",
    "b_relu.py": "shape & size \"bad\"",
    "c_relu.py": "plain failure",
}


@pytest.fixture(scope="session")
def kernelopt():
    """The engine binary, built with scripts/build.sh when it is not there yet."""
    if not os.path.isfile(BINARY):
        build = subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], capture_output=True, text=True)
        assert build.returncode == 0, f"scripts/build.sh failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    assert os.access(BINARY, os.X_OK), f"{BINARY} is missing after scripts/build.sh"
    return BINARY


@pytest.fixture(scope="session")
def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("chromium is not installed: this test renders bench.html in headless Chromium. "
                "Install it with scripts/setup.sh (Debian package `chromium`) or `apt-get install -y chromium`.")


@pytest.fixture(scope="session")
def bench_html(kernelopt, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench_html")
    problems = tmp / "problems" / "level1"
    problems.mkdir(parents=True)
    for name, message in MESSAGES.items():
        (problems / name).write_text(textwrap.dedent(PROBLEM.format(message=message)))
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)  # conftest sets it for this process; a user's run has none
    proc = subprocess.run([kernelopt, "bench", str(tmp / "problems"), "--out", str(tmp / "out"),
                           "--workspace", str(tmp / "ws")],
                          cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    page = tmp / "out" / "bench.html"
    assert page.is_file(), f"bench.html not written; out has {sorted(os.listdir(tmp / 'out'))}"
    return page


def _chromium(chromium, tmp_path, *args):
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_bench_html_source(bench_html):
    html = bench_html.read_text()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert re.search(r'<(link|img|script)[^>]*\s(src|href)=', html) is None, "page loads an external resource"


def test_bench_html_renders_in_chromium(chromium, bench_html, tmp_path):
    proc = _chromium(chromium, tmp_path, "--dump-dom", bench_html.as_uri())
    assert proc.returncode == 0, f"chromium --dump-dom exit {proc.returncode}\n{proc.stderr[-3000:]}"
    dom = proc.stdout
    body = re.search(r"<body[^>]*>", dom)
    assert body, f"no <body> in the dumped DOM:\n{dom[:2000]}"
    assert 'data-ready="1"' in body.group(0), f"the page's script did not run to the end: {body.group(0)}"
    plot = re.search(r'<svg[^>]*id="speedup-plot"[^>]*>', dom)
    assert plot, "no speedup plot in the DOM"
    assert 'data-bars="3"' in plot.group(0), plot.group(0)
    assert len(re.findall(r'<rect class="bar" data-status="failed"', dom)) == 3
    assert 'id="ref-line"' in dom
    assert 'id="level-table"' in dom and 'id="problem-table"' in dom
    assert "<script>alert" not in dom


def test_bench_html_screenshot(chromium, bench_html, tmp_path):
    shot = tmp_path / "bench.png"
    proc = _chromium(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1200,900",
                     "--hide-scrollbars", bench_html.as_uri())
    assert proc.returncode == 0, f"chromium --screenshot exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert shot.is_file(), f"no screenshot written\n{proc.stderr[-3000:]}"
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG"
    assert len(data) > 10_000, f"screenshot is only {len(data)} bytes"
    keep = os.environ.get("KERNELOPT_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
