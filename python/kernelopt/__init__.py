"""kernelopt: the Python side of kernelopt.

`kernelopt.load(run_dir)` returns the optimized model of a finished run; the
worker (`python -m kernelopt.worker`) serves the C++ engine over stdio.
"""
__version__ = "0.1.0"


def load(run_dir, device="cuda"):
    """The optimized model of a finished `kernelopt optimize` run, callable with the model's inputs."""
    from kernelopt.runtime.loader import load as _load
    return _load(run_dir, device=device)
