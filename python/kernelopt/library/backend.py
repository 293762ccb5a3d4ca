"""`kernelopt.backend(library)`: torch.compile with Inductor as usual, library kernels swapped in.

Inductor compiles the graph exactly as it would; each output module it loads (fresh compile
or cache hit, both go through PyCodeCache.load_by_key_path) is parsed, and every Triton
kernel whose fingerprint matches a library entry exactly is replaced by the entry's verified
source before the module is loaded (substitute.py). Kernels without a match stay as Inductor
generated them, and so does any module that is not Triton (C++ on the CPU) or cannot be
parsed. Dynamo's guards and recompilation are untouched: a new shape compiles a new module,
which is matched again on its own fingerprints.
"""
import contextlib
import hashlib
import os
import tempfile

from kernelopt.library.substitute import read_library, substitute


class LibraryBackend:
    """A torch.compile backend. `used` lists (kernel name, library entry id) of every substitution."""

    def __init__(self, library_path, device_name=None, run=None):
        self.library_path = os.path.abspath(library_path) if library_path is not None else None
        self.entries = read_library(self.library_path) if library_path is not None else {}
        self._device_name = device_name
        self.used = []
        self._dir = None
        # a run's kept whole-model decision (--decisions), from its manifest: its Inductor config and, for
        # CUDA graphs, every output cloned (the next replay overwrites them); `decision` says which
        self.decision, self._config, self._clone, self._cudnn_benchmark = "default", {}, False, False
        if run is not None:
            self._use_decision(run)

    def _use_decision(self, run):
        import json
        import logging
        from kernelopt.runtime.decision import uses_cudagraphs
        from kernelopt.runtime.loader import decision_config
        with open(os.path.join(run, "manifest.json")) as f:
            kept = json.load(f).get("decision") or {}
        settings = kept.get("settings") or {}
        self.decision = kept.get("kept", "default")
        self._config = decision_config(settings)
        self._clone = uses_cudagraphs(settings)
        self._cudnn_benchmark = bool(settings.get("cudnn_benchmark"))
        if self.decision != "default":
            logging.getLogger("kernelopt").warning(
                "kernelopt.backend: %s reproduces the whole-model decision %s%s (freezing's weight guard and "
                "channels_last are kernelopt.load's only)", run, self.decision,
                (": outputs cloned" if self._clone else "")
                + (": cuDNN autotuning, each call on a thread of its own" if self._cudnn_benchmark else ""))

    def device_name(self):
        if self._device_name is None:
            from kernelopt.library.fingerprint import device_name
            self._device_name = device_name("cuda")
        return self._device_name

    def rewrite(self, source):
        """The module source with library kernels substituted (unchanged where nothing matches)."""
        if not self.entries or "async_compile.triton(" not in source:
            return source, []
        from kernelopt.artifact.inductor import ArtifactError, parse_module
        try:
            artifact = parse_module(source)
        except (ArtifactError, SyntaxError, ValueError, KeyError):
            return source, []
        return substitute(source, artifact, self.entries, self.device_name())

    @contextlib.contextmanager
    def _substitutions(self):
        from torch._inductor.codecache import PyCodeCache
        orig = PyCodeCache.load_by_key_path.__func__
        backend = self

        def patched(cls, key, path, linemap=None, attrs=None, **kw):
            try:
                with open(path, encoding="utf-8") as f:
                    source = f.read()
            except (OSError, UnicodeDecodeError):
                return orig(cls, key, path, linemap, attrs, **kw)
            new, used = backend.rewrite(source)
            if not used:
                return orig(cls, key, path, linemap, attrs, **kw)
            if backend._dir is None:
                backend._dir = tempfile.mkdtemp(prefix="kernelopt_library_")
            digest = hashlib.sha256(new.encode("utf-8")).hexdigest()[:24]
            new_path = os.path.join(backend._dir, f"c{digest}.py")
            with open(new_path, "w", encoding="utf-8") as f:
                f.write(new)
            backend.used.extend((name, entry["id"]) for name, entry in used)
            return orig(cls, key + "_kernelopt_library", new_path, linemap, attrs, **kw)

        PyCodeCache.load_by_key_path = classmethod(patched)
        try:
            yield
        finally:
            PyCodeCache.load_by_key_path = classmethod(orig)

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx
        with self._substitutions():
            compiled = compile_fx(gm, example_inputs, config_patches=self._config or None)
        if not self._clone and not self._cudnn_benchmark:
            return compiled
        import torch
        from kernelopt.runtime.decision import CudnnBenchmarked
        run = CudnnBenchmarked(compiled) if self._cudnn_benchmark else compiled

        def decided(*args):
            out = run(*args)
            if not self._clone:
                return out
            return torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, out)
        decided._boxed_call = getattr(compiled, "_boxed_call", False)  # Dynamo calls a boxed function with one list
        return decided
