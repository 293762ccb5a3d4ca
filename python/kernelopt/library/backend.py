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

    def __init__(self, library_path, device_name=None):
        self.library_path = os.path.abspath(library_path)
        self.entries = read_library(self.library_path)
        self._device_name = device_name
        self.used = []
        self._dir = None

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
            return compile_fx(gm, example_inputs)
