"""tests/python runs Triton kernels under the interpreter (CPU tensors), on any machine.

TRITON_INTERPRET must be set before triton or Inductor's triton_helpers are
imported (@triton.jit reads it at decoration time), so it is set here, for this
whole pytest process; GPU tests live in tests/gpu and run in another process.
"""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
