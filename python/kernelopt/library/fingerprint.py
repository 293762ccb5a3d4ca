"""The kernel library's fingerprint: the one definition, used by the worker and the backend.

A fingerprint names one kernel as it runs: its normalized source, the shape, stride and
dtype of every argument of every launch, and the device's name. Two kernels with equal
fingerprints compute the same thing on the same data layout on the same kind of device,
so a winner verified for one may be tried for the other (and is verified again there).

    fingerprint = sha256(JSON({"format": FORMAT, "source": normalized_source(text, name),
                               "launches": [[descriptor of each argument] per launch],
                               "device": device_name}, sort_keys, no spaces))

Normalization (normalized_source) works on Python tokens, so it ignores exactly what Python
ignores: comments, blank lines, line continuations and spacing inside a line are dropped;
indentation is kept as depth; the kernel's own name, in names and inside string literals
(Inductor writes it into inductor_meta), becomes KERNEL, because Inductor numbers kernels by
their position in a graph (`..._0` here is `..._3` in another model). Everything else stays:
size hints, constants, Inductor's backend hash and device properties, so a kernel generated
by another Triton or for another GPU generation is another kernel.

The C++ engine never recomputes this: the worker sends fingerprints with the capture. Pure
Python (no torch import), so it is tested anywhere.
"""
import ast
import hashlib
import io
import json
import re
import tokenize

FORMAT = "kernelopt-fingerprint-1"
PLACEHOLDER = "KERNEL"

_DROP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def normalized_source(text, name):
    """text with comments, blank lines and spacing dropped and the kernel's name replaced (see above).

    Raises SyntaxError (tokenize.TokenError included) for text Python cannot tokenize."""
    word = re.compile(r"\b" + re.escape(name) + r"\b")
    lines, current, depth = [], [], 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _DROP:
                continue
            if tok.type == tokenize.INDENT:
                depth += 1
            elif tok.type == tokenize.DEDENT:
                depth -= 1
            elif tok.type == tokenize.NEWLINE:
                if current:
                    lines.append("  " * depth + " ".join(current))
                current = []
            elif tok.type == tokenize.NAME and tok.string == name:
                current.append(PLACEHOLDER)
            elif tok.type == tokenize.STRING:
                current.append(word.sub(PLACEHOLDER, tok.string))
            else:
                current.append(tok.string)
    except (tokenize.TokenError, IndentationError) as exc:
        raise SyntaxError(f"kernel {name}: cannot tokenize its source: {exc}") from None
    if current:
        lines.append("  " * depth + " ".join(current))
    return "\n".join(lines) + "\n"


def tensor_descriptor(dtype, shape, stride):
    """One tensor argument: 'float32[4096,8192][8192,1]' (dtype without 'torch.')."""
    dtype = str(dtype).replace("torch.", "")
    return f"{dtype}[{','.join(map(str, shape))}][{','.join(map(str, stride))}]"


def value_descriptor(value):
    """A non-tensor argument: its Python repr, prefixed by its type (so 1, 1.0 and True differ)."""
    return f"{type(value).__name__}:{value!r}"


def fingerprint(normalized, launches, device_name):
    """The fingerprint (sha256 hex) of a normalized source, its launches' argument descriptors
    (a list per launch, in launch order) and the device name."""
    doc = {"format": FORMAT, "source": normalized, "launches": [list(l) for l in launches],
           "device": device_name}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Inductor output modules: the launches' arguments are named buffers of call().

def _buffer_descriptor(buf):
    if buf and buf.get("shape") is not None and buf.get("stride") is not None and buf.get("dtype"):
        return tensor_descriptor(buf["dtype"], buf["shape"], buf["stride"])
    return None


def inductor_arg_descriptor(arg_text, buffers):
    """One argument of `kernel.run(...)` in call(), from its source text and the module's buffers
    (the parser's "buffers": shape, stride, dtype per name)."""
    try:
        node = ast.parse(arg_text.strip(), mode="eval").body
    except SyntaxError:
        return "expr:" + arg_text.strip()
    if isinstance(node, ast.Name):
        desc = _buffer_descriptor(buffers.get(node.id))
        return desc if desc else "buffer?"
    if isinstance(node, ast.Constant):
        return value_descriptor(node.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reinterpret_tensor"
            and node.args and isinstance(node.args[0], ast.Name)):
        base = _buffer_descriptor(buffers.get(node.args[0].id)) or "buffer?"
        rest = ",".join(ast.unparse(a) for a in node.args[1:])
        return f"view({base},{rest})"
    return "expr:" + ast.unparse(node)


def inductor_fingerprints(source, artifact, device_name):
    """{kernel name: fingerprint} for every Triton kernel of an Inductor output module, given the
    parser's artifact of that source (kernelopt.artifact.inductor.parse_module)."""
    raw = source.encode("utf-8")
    out = {}
    for k in artifact["kernels"]:
        begin, end = k["source_span"]
        text = raw[begin:end].decode("utf-8")
        launches = [[inductor_arg_descriptor(a, artifact["buffers"]) for a in l["args"]]
                    for l in artifact["launches"] if l["kernel"] == k["name"]]
        out[k["name"]] = fingerprint(normalized_source(text, k["name"]), launches, device_name)
    return out


def rename_kernel(text, old, new):
    """text with the identifier old replaced by new wherever it is a whole word (a library entry's
    source under the name this module gives the kernel)."""
    if old == new:
        return text
    return re.sub(r"(?<![A-Za-z0-9_])" + re.escape(old) + r"(?![A-Za-z0-9_])", new, text)


def device_name(device):
    """The name the fingerprint uses for a torch device: the GPU's name ("NVIDIA H200") for a CUDA
    device, else the device type ("cpu")."""
    import torch
    dev = torch.device(device)
    if dev.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name(dev.index if dev.index is not None else torch.cuda.current_device())
    return dev.type
