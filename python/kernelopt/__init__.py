"""kernelopt: the Python side of kernelopt.

`kernelopt.load(run_dir)` returns the optimized model of a finished run;
`kernelopt.backend(library)` / `kernelopt.compile(model, library=...)` compile any model with
Inductor and swap in the kernel library's verified kernels where fingerprints match; the
worker (`python -m kernelopt.worker`) serves the C++ engine over stdio.
"""
__version__ = "0.1.0"


def load(run_dir, device="cuda"):
    """The optimized model of a finished `kernelopt optimize` run, callable with the model's inputs."""
    from kernelopt.runtime.loader import load as _load
    return _load(run_dir, device=device)


def backend(library=None, run=None):
    """A torch.compile backend: Inductor as usual, with the library file's verified kernels
    substituted wherever a generated kernel's fingerprint matches an entry exactly
    (`torch.compile(model, backend=kernelopt.backend("team.kolib"))`). The backend's `used`
    lists (kernel name, entry id) of every substitution made. With `run` (a run directory of
    `optimize --decisions`), the run's kept whole-model decision's Inductor settings too (its
    `decision` attribute names it; CUDA graphs' outputs are cloned)."""
    from kernelopt.library.backend import LibraryBackend
    return LibraryBackend(library, run=run)


def compile(model, library, **kwargs):
    """torch.compile(model, backend=kernelopt.backend(library), **kwargs)."""
    import torch
    return torch.compile(model, backend=backend(library), **kwargs)
