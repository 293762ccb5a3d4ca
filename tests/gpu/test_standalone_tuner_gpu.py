"""On a GPU: the engine's launch-config line for a standalone kernel
(`@triton.heuristics(values={'num_warps': lambda args: W, 'num_stages': lambda args: S})`, see
src/artifact/stitch.hpp) makes Triton compile the kernel with W warps and S stages although the
user's launcher passes its own num_warps, and a one-config @triton.autotune would not."""
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOFTMAX = os.path.join(ROOT, "examples", "triton", "softmax.py")
LINE = "@triton.heuristics(values={{'num_warps': lambda args: {w}, 'num_stages': lambda args: {s}}})\n"


def _pinned(tmp_path, text):
    from kernelopt.artifact.triton_file import parse_file
    raw = open(SOFTMAX, "rb").read()
    start = next(k for k in parse_file(raw.decode())["kernels"] if k["name"] == "softmax_kernel")["source_span"][0]
    path = tmp_path / "cand.py"
    path.write_bytes(raw[:start] + text.encode() + raw[start:])
    return str(path)


def _compiled(mod):
    """The CompiledKernel each launch of mod.softmax_kernel returns from the jit function."""
    from triton.runtime.jit import JITFunction
    jit = mod.softmax_kernel
    while not isinstance(jit, JITFunction):  # under the engine's Heuristics
        jit = jit.fn
    seen, inner = [], jit.run

    def run(*args, **kwargs):
        seen.append(inner(*args, **kwargs))
        return seen[-1]

    jit.run = run
    return seen


def test_pinned_config_is_what_triton_compiles(tmp_path):
    import torch
    from kernelopt.inputs.triton.session import load_file
    orig, cand = load_file(SOFTMAX), load_file(_pinned(tmp_path, LINE.format(w=2, s=1)))
    base_k, cand_k = _compiled(orig), _compiled(cand)
    x = torch.randn(64, 1024, device="cuda")
    expected, got = orig.launch(x), cand.launch(x)
    torch.cuda.synchronize()
    assert base_k[0].metadata.num_warps == 4  # the launcher's choice for 1024 columns
    assert cand_k[0].metadata.num_warps == 2 and cand_k[0].metadata.num_stages == 1
    assert torch.allclose(got, expected, atol=1e-6, rtol=1e-5)


def test_a_one_config_autotune_cannot_override_the_launcher(tmp_path):
    import torch
    from kernelopt.inputs.triton.session import load_file
    line = "@triton.autotune(configs=[triton.Config({}, num_warps=2, num_stages=1)], key=[])\n"
    cand = load_file(_pinned(tmp_path, line))
    with pytest.raises(TypeError, match="multiple values for keyword argument 'num_warps'"):
        cand.launch(torch.randn(64, 1024, device="cuda"))
