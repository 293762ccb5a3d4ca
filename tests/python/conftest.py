"""tests/python runs Triton kernels under the interpreter (CPU tensors), on any machine.

TRITON_INTERPRET must be set before triton or Inductor's triton_helpers are
imported (@triton.jit reads it at decoration time), so it is set here, for this
whole pytest process; GPU tests live in tests/gpu and run in another process.
"""
import os
import subprocess
import sys

import pytest

os.environ["TRITON_INTERPRET"] = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture(scope="session")
def kernelopt():
    """The engine binary the README builds (build/tools/kernelopt/kernelopt); built here if absent."""
    binary = os.path.join(ROOT, "build", "tools", "kernelopt", "kernelopt")
    if not os.path.isfile(binary):
        build = subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], capture_output=True, text=True)
        assert build.returncode == 0, f"scripts/build.sh failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    return binary
