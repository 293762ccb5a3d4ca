"""The project's own benchmark suite (bench/problems/{level1,level2,level3,small}/*.py), in KernelBench format.

Every problem is imported, checked for Model / get_inputs / get_init_inputs, a module docstring and
module-level size constants; its Model is built and its inputs drawn on the `meta` device only (no data, no
memory: real inputs go up to 16 GB), and its forward runs outside that context, so a constant the forward
makes without the input's device lands on the CPU and fails against the meta inputs. The meta tensors give
each problem's input bytes, weights and output, and FlopCounterMode its FLOPs: levels 1 and 2's memory-bound
problems must read 100 MB to 16 GB, the low-precision ones keep their weights in their inputs' dtype. Suite
checks: at least 100 problems in levels 1-3 (level 3: 20 networks), 12 in bf16/fp16, a `small/` set of
today's host-bound sizes, no duplicate files, and bench/problems/README.md listing every problem with its
input bytes.
"""
import ast
import functools
import hashlib
import importlib.util
import os
import re

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBLEMS = os.path.join(ROOT, "bench", "problems")
LEVELS = ("level1", "level2", "level3")
GROUPS = LEVELS + ("small",)
LOW_PRECISION = (torch.bfloat16, torch.float16)
INPUT_DTYPES = (torch.float32, torch.int64, torch.bool) + LOW_PRECISION
MAX_INPUT_BYTES = 16 * 10**9       # the largest inputs users run
MIN_MEMORY_BOUND_INPUT = 100 * 10**6  # below this a memory-bound op is launch- and host-bound
MAX_WORKING_BYTES = 30 * 10**9     # inputs + weights + output; kernelopt holds about 4 copies on a 139 GB GPU
# FLOPs per byte (inputs + weights + output) below which a problem is memory-bound: the H200's fp32 ridge,
# 67 TFLOP/s over 4.3 TB/s measured copy bandwidth
RIDGE = 67e12 / 4.3e12


def _problem_files():
    files = []
    for group in GROUPS:
        for dirpath, _, names in os.walk(os.path.join(PROBLEMS, group)):
            files += [os.path.join(dirpath, n) for n in names if n.endswith(".py") and not n.startswith("_")]
    return sorted(files)


FILES = _problem_files()
IDS = [os.path.relpath(p, PROBLEMS).replace(os.sep, "/") for p in FILES]


def _group(rel):
    return rel.split("/")[0]


def _load(path):
    name = "bench_problem_" + hashlib.sha256(path.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


@functools.lru_cache(maxsize=None)
def meta_facts(path):
    """What a problem is, read from meta tensors: built and drawn under torch.device("meta"), the forward run
    outside it (without grad) under FlopCounterMode."""
    mod = _load(path)
    with torch.device("meta"):
        model = mod.Model(*mod.get_init_inputs()).eval()
        inputs = mod.get_inputs()
    assert isinstance(inputs, (list, tuple)) and inputs, "get_inputs() returned no inputs"
    assert all(isinstance(x, torch.Tensor) and x.device.type == "meta" for x in inputs), "an input is not a meta tensor"
    weights = list(model.parameters()) + list(model.buffers())
    assert all(w.device.type == "meta" for w in weights), "a weight was made off the model's device"
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        out = model(*inputs)
    assert isinstance(out, torch.Tensor) and out.device.type == "meta", "the forward's output is not one meta tensor"
    return {
        "input_bytes": _nbytes(inputs),
        "weight_bytes": _nbytes(weights),
        "output_bytes": _nbytes([out]),
        "flops": counter.get_total_flops(),
        "input_dtypes": {x.dtype for x in inputs},
        "weight_dtypes": {w.dtype for w in weights if w.is_floating_point()},
    }


def _low_precision(facts):
    return any(d in LOW_PRECISION for d in facts["input_dtypes"])


def test_suite_size():
    count = {g: sum(1 for rel in IDS if _group(rel) == g) for g in GROUPS}
    assert sum(count[level] for level in LEVELS) >= 100, count
    assert all(count[level] >= 10 for level in LEVELS), count
    assert count["level3"] >= 20, count
    assert 5 <= count["small"] <= 8, count


def test_low_precision_set():
    low = [rel for path, rel in zip(FILES, IDS) if _group(rel) in LEVELS and _low_precision(meta_facts(path))]
    assert len(low) >= 12, f"only {len(low)} bf16/fp16 problems: {low}"


def test_no_identical_files():
    seen = {}
    for path in FILES:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        assert digest not in seen, f"{path} is identical to {seen[digest]}"
        seen[digest] = path


def _readme_rows():
    """{problem: input bytes} from the README's tables: | `level1/x.py` | what | 1,234 (1.2 KiB) |"""
    with open(os.path.join(PROBLEMS, "README.md")) as f:
        readme = f.read()
    rows = re.findall(r"^\| `([^`]+\.py)` \|.*\| ([\d,]+) \([^)]*\) \|$", readme, flags=re.M)
    return {name: int(size.replace(",", "")) for name, size in rows}


def test_readme_lists_every_problem_with_its_input_bytes():
    rows = _readme_rows()
    missing = [rel for rel in IDS if rel not in rows]
    assert not missing, f"not in bench/problems/README.md: {missing}"
    stale = [rel for rel in rows if rel not in IDS]
    assert not stale, f"bench/problems/README.md lists problems that do not exist: {stale}"
    wrong = {rel: (rows[rel], meta_facts(path)["input_bytes"]) for path, rel in zip(FILES, IDS)
             if rows[rel] != meta_facts(path)["input_bytes"]}
    assert not wrong, f"README input bytes (listed, actual): {wrong}"


def test_meta_catches_a_constant_made_off_the_inputs_device(tmp_path):
    # the check test_problem relies on: a forward that makes a tensor without the input's device fails
    path = tmp_path / "bad.py"
    path.write_text('"""bad"""\nimport torch\nimport torch.nn as nn\nSIZE = 4\n\n'
                    "class Model(nn.Module):\n    def forward(self, x):\n        return x + torch.ones(SIZE)\n\n"
                    "def get_inputs():\n    return [torch.randn(SIZE, SIZE)]\n\n"
                    "def get_init_inputs():\n    return []\n")
    with pytest.raises(RuntimeError, match="device"):
        meta_facts(str(path))


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
        assert callable(getattr(mod, attr, None)), f"defines no {attr}"
    assert isinstance(mod.get_init_inputs(), (list, tuple))

    facts = meta_facts(path)
    assert facts["input_dtypes"] <= set(INPUT_DTYPES), facts["input_dtypes"]
    float_inputs = {d for d in facts["input_dtypes"] if d.is_floating_point}
    assert len(float_inputs) <= 1, f"floating inputs of several dtypes: {float_inputs}"
    if float_inputs:
        assert facts["weight_dtypes"] <= float_inputs, f"weights {facts['weight_dtypes']}, inputs {float_inputs}"
    assert facts["input_bytes"] <= MAX_INPUT_BYTES, f"inputs take {facts['input_bytes']:,} bytes"
    assert facts["weight_bytes"] < 1 << 30, f"weights take {facts['weight_bytes']:,} bytes"
    moved = facts["input_bytes"] + facts["weight_bytes"] + facts["output_bytes"]
    assert moved <= MAX_WORKING_BYTES, f"inputs, weights and output take {moved:,} bytes"
    rel = os.path.relpath(path, PROBLEMS).replace(os.sep, "/")
    if _group(rel) in ("level1", "level2") and facts["flops"] / moved < RIDGE:  # memory-bound
        assert facts["input_bytes"] >= MIN_MEMORY_BOUND_INPUT, \
            f"memory-bound with {facts['input_bytes']:,} input bytes (want 100 MB - 16 GB)"
