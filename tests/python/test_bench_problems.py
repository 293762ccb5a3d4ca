"""The project's own benchmark suite (bench/problems/level{1,2,3}/*.py), in KernelBench format.

Every problem is imported, checked for Model / get_inputs / get_init_inputs, a module
docstring and module-level size constants, and its Model is constructed on the CPU
(cheap). Full-size forwards are never run here: the inputs are hundreds of MB. Shapes
are still checked end to end by running each forward on the `meta` device (no data,
no compute). Suite-level checks: enough problems per level, no duplicate files, and
every problem listed in bench/problems/README.md.
"""
import ast
import hashlib
import importlib.util
import os
import time

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBLEMS = os.path.join(ROOT, "bench", "problems")
LEVELS = ("level1", "level2", "level3")


def _problem_files():
    files = []
    for level in LEVELS:
        for dirpath, _, names in os.walk(os.path.join(PROBLEMS, level)):
            for name in names:
                if name.endswith(".py") and not name.startswith("_"):
                    files.append(os.path.join(dirpath, name))
    return sorted(files)


FILES = _problem_files()
IDS = [os.path.relpath(p, PROBLEMS) for p in FILES]


def _load(path):
    name = "bench_problem_" + hashlib.sha256(path.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_suite_size():
    assert len(FILES) >= 45, f"only {len(FILES)} problems"
    for level in LEVELS:
        n = sum(1 for rel in IDS if rel.startswith(level + os.sep))
        assert n >= 10, f"{level} has only {n} problems"


def test_no_identical_files():
    seen = {}
    for path in FILES:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        assert digest not in seen, f"{path} is identical to {seen[digest]}"
        seen[digest] = path


def test_readme_lists_every_problem():
    with open(os.path.join(PROBLEMS, "README.md")) as f:
        readme = f.read()
    missing = [rel for rel in IDS if rel.replace(os.sep, "/") not in readme]
    assert not missing, f"not in bench/problems/README.md: {missing}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_problem(path):
    with open(path) as f:
        source = f.read()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc and doc.strip(), "no module docstring"
    consts = [
        node for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, (int, float)) and not isinstance(node.value.value, bool)
    ]
    assert consts, "no module-level size constants"
    for banned in (".cuda(", "torch.load(", "open(", "dropout("):
        assert banned not in source.lower(), f"uses {banned!r}"

    mod = _load(path)
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        assert hasattr(mod, attr), f"defines no {attr}"
    assert callable(mod.get_inputs)
    init = mod.get_init_inputs()
    assert isinstance(init, (list, tuple))

    # real construction on the CPU (weights only; never the full-size inputs)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    model = mod.Model(*init)
    assert isinstance(model, torch.nn.Module)
    model.eval()
    assert time.perf_counter() - t0 < 5.0, "constructor too slow"
    weight_bytes = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
    assert weight_bytes < 1 << 30, f"weights take {weight_bytes} bytes"
    del model

    # shape-only forward on the meta device: no allocation, no compute
    with torch.device("meta"):
        meta_model = mod.Model(*mod.get_init_inputs()).eval()
        inputs = mod.get_inputs()
        assert isinstance(inputs, (list, tuple)) and inputs, "get_inputs() returned no inputs"
        assert all(isinstance(x, torch.Tensor) for x in inputs)
        with torch.no_grad():
            out = meta_model(*inputs)
    assert isinstance(out, torch.Tensor) and out.device.type == "meta"
    assert all(x.dtype in (torch.float32, torch.int64) for x in inputs)
