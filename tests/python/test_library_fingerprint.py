"""The kernel library's fingerprint and substitution (python/kernelopt/library/) on the real
Inductor captures in tests/fixtures/inductor/ (H200, torch 2.11, triton 3.6).

The fixtures hold no kernel that two of them share, so "the same kernel in another capture" is
the fixture as another compile writes it: another AOT ID and cache path, and the kernel numbered
by its position in another graph (`_1` -> `_4`). Sizes, strides and devices that differ must
give another fingerprint.
"""
import hashlib
import os
import re
import sqlite3

import pytest

from kernelopt.library.fingerprint import (inductor_fingerprints, normalized_source, rename_kernel)
from kernelopt.library.substitute import LibraryError, read_library, substitute
from kernelopt.artifact.inductor import parse_module

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "inductor")
H200 = "NVIDIA H200"
GELU = "triton_poi_fused_addmm_gelu_1"


def _fixture(name):
    with open(os.path.join(FIX, name + ".py"), encoding="utf-8") as f:
        return f.read()


def _prints(source, device=H200):
    return inductor_fingerprints(source, parse_module(source), device)


def _another_capture(source, old, new):
    """source as another compile writes it: other AOT ID and kernel path, the kernel renumbered."""
    out = re.sub(r"# AOT ID: \['\d+_inference'\]", "# AOT ID: ['7_inference']", source)
    out = re.sub(r"# kernel path: \S+", "# kernel path: /tmp/torchinductor_other/xx/cxx.py", out)
    return rename_kernel(out, old, new)


def test_pinned_value_for_the_softmax_fixture():
    # a change of definition orphans every library file already shared: it must be deliberate
    assert _prints(_fixture("softmax")) == {
        "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0":
            "d8dd0b40d9ffaa3db7e416620a522387ca5acca98f5e14e50be4cb0b0620526c"}


def test_same_kernel_in_another_capture_has_the_same_fingerprint():
    src = _fixture("mlp_block")
    other = _another_capture(src, GELU, "triton_poi_fused_addmm_gelu_4")
    assert other != src and "triton_poi_fused_addmm_gelu_4" in other and GELU not in other
    a, b = _prints(src), _prints(other)
    assert a[GELU] == b["triton_poi_fused_addmm_gelu_4"]
    assert a["triton_per_fused_native_layer_norm_0"] == b["triton_per_fused_native_layer_norm_0"]


def test_another_size_stride_or_device_gives_another_fingerprint():
    big, small = _prints(_fixture("mlp_block")), _prints(_fixture("mlp_block_small"))
    assert set(big) == set(small)
    for name in big:  # the same kernels (by name and ops) at another size
        assert big[name] != small[name], name
    src = _fixture("softmax")
    name = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0"
    # the kernel text unchanged, only the input's strides (a transposed layout): another fingerprint
    transposed = src.replace("assert_size_stride(arg0_1, (4096, 8192), (8192, 1))",
                             "assert_size_stride(arg0_1, (4096, 8192), (1, 4096))")
    assert transposed != src
    assert _prints(transposed)[name] != _prints(src)[name]
    assert _prints(src, "NVIDIA H100 80GB HBM3")[name] != _prints(src)[name]


def test_normalization_ignores_comments_and_spacing_not_code():
    text = "@triton.jit\ndef k_0(x_ptr, n):\n    y = tl.load(x_ptr)  # a comment\n\n    tl.store(x_ptr, y+1)\n"
    same = "# header\n@triton.jit\ndef k_3(x_ptr,n):\n\n    y = tl.load( x_ptr )\n    tl.store(x_ptr, y + 1)\n"
    other = "@triton.jit\ndef k_0(x_ptr, n):\n    y = tl.load(x_ptr)\n    tl.store(x_ptr, y + 2)\n"
    assert normalized_source(text, "k_0") == normalized_source(same, "k_3")
    assert normalized_source(text, "k_0") != normalized_source(other, "k_0")
    assert "KERNEL" in normalized_source(text, "k_0") and "k_0" not in normalized_source(text, "k_0")


def _entry_for(source, name, new_text, eid=1):
    """A library entry for the kernel `name` of source, verified elsewhere under another number."""
    stored_name = name[:-1] + "9"
    text = rename_kernel(new_text, name, stored_name)
    fp = _prints(source)[name]
    return {fp: {"id": eid, "fingerprint": fp, "kernel_name": stored_name, "source": text,
                 "source_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(), "speedup": 1.3, "device": H200}}


def _kernel_text(source, name):
    art = parse_module(source)
    k = next(k for k in art["kernels"] if k["name"] == name)
    b, e = k["source_span"]
    return source.encode("utf-8")[b:e].decode("utf-8"), b, e


def test_substitution_puts_the_library_source_in_and_leaves_every_other_byte():
    src = _fixture("mlp_block")
    text, begin, end = _kernel_text(src, GELU)
    new_text = text.replace("tmp1 = tmp0 + tmp", "tmp1 = tmp + tmp0") if "tmp1 = tmp0 + tmp" in text else text + "    pass\n"
    assert new_text != text
    entries = _entry_for(src, GELU, new_text)
    out, used = substitute(src, parse_module(src), entries, H200)
    assert [name for name, _ in used] == [GELU]
    raw, new_raw = src.encode("utf-8"), out.encode("utf-8")
    assert new_raw[:begin] == raw[:begin]                              # byte-identical before the kernel
    assert new_raw[begin:begin + len(new_text.encode())] == new_text.encode()  # the library's text, renamed back
    assert new_raw[begin + len(new_text.encode()):] == raw[end:]      # and after it
    assert parse_module(out)["kernels"][1]["name"] == GELU              # still a module Inductor's loader reads


def test_no_substitution_on_another_device_or_for_a_damaged_entry():
    src = _fixture("mlp_block")
    text, _, _ = _kernel_text(src, GELU)
    entries = _entry_for(src, GELU, text + "    pass\n")
    out, used = substitute(src, parse_module(src), entries, "NVIDIA A100-SXM4-80GB")
    assert out == src and used == []
    damaged = {fp: dict(e, source=e["source"].replace("pass", "return")) for fp, e in entries.items()}
    out, used = substitute(src, parse_module(src), damaged, H200)
    assert out == src and used == []


def test_read_library_errors_are_one_line(tmp_path):
    with pytest.raises(LibraryError, match="no such library file"):
        read_library(str(tmp_path / "missing.kolib"))
    (tmp_path / "text.kolib").write_text("not a database at all, just some text of some length" * 4)
    with pytest.raises(LibraryError, match="not a kernelopt library file"):
        read_library(str(tmp_path / "text.kolib"))
    con = sqlite3.connect(tmp_path / "other.db")
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    with pytest.raises(LibraryError, match="not a kernelopt library file"):
        read_library(str(tmp_path / "other.db"))
