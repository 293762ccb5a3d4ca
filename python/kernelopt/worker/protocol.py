"""The worker protocol's one definition, protocol.json (JSON Schema, draft 7): each op's arguments with
their defaults, and the keys of its result. The engine checks its requests and the replies against the
same file (src/worker/protocol.cpp, compiled in); here every request is checked and given its defaults
before an op runs, and every result is checked before it is sent. An op reads its arguments as
args["name"]: a default is stated in protocol.json and nowhere else."""
import copy
import hashlib
import json
import os

try:
    import jsonschema
except ImportError:  # a GPU machine's image may lack it (nothing can be installed there): the engine has checked
    jsonschema = None  # the request against this same file before sending it; defaults are still filled here

_PATH = os.path.join(os.path.dirname(__file__), "protocol.json")
with open(_PATH, "rb") as _f:
    _BYTES = _f.read()
SCHEMA = json.loads(_BYTES)
SCHEMA_SHA256 = hashlib.sha256(_BYTES).hexdigest()  # the hello reply's "schema": the engine compares its own
_VALIDATORS = {}


class ProtocolError(Exception):
    """A request or result the schema does not allow: answered as an error of kind "protocol"."""
    kind = "protocol"


def ops():
    return set(SCHEMA["ops"])


def checking():
    """Whether this side checks requests and results too (jsonschema installed), for doctor and tests."""
    return jsonschema is not None


def _validator(op, part):
    key = (op, part)
    if key not in _VALIDATORS:
        if op not in SCHEMA["ops"]:
            raise ProtocolError(f"unknown op {op!r}")
        schema = dict(SCHEMA["ops"][op][part], definitions=SCHEMA["definitions"])
        _VALIDATORS[key] = jsonschema.Draft7Validator(schema) if jsonschema is not None else None
    return _VALIDATORS[key]


def _first_error(validator, value, what):
    if validator is None:
        return
    error = min(validator.iter_errors(value), key=lambda e: (len(e.path), e.message), default=None)
    if error is None:
        return
    where = "/".join(str(p) for p in error.path)
    raise ProtocolError(f"{what}{' ' + where if where else ''}: {error.message}")


def _default(prop):
    """(True, default) of a property: its own, else its definition's ($ref); (False, None) without one."""
    if "default" in prop:
        return True, prop["default"]
    ref = prop.get("$ref", "")
    target = SCHEMA["definitions"].get(ref.rsplit("/", 1)[-1], {}) if ref.startswith("#/definitions/") else {}
    return ("default" in target), target.get("default")


def check_args(op, args):
    """args checked against op's schema, with every absent argument that has a default given it (a new
    dict); ProtocolError names the first argument that is wrong."""
    _first_error(_validator(op, "args"), args, f"{op} request")
    out = dict(args)
    for name, prop in SCHEMA["ops"][op]["args"].get("properties", {}).items():
        has, value = _default(prop)
        if name not in out and has:
            out[name] = copy.deepcopy(value)
    return out


def check_result(op, result):
    """result unchanged, or ProtocolError naming what the engine could not read."""
    _first_error(_validator(op, "result"), result, f"{op} result")
    return result


def checked(op, fn):
    """fn(args) -> result behind the protocol: its arguments checked and defaulted, its result checked."""
    def run(args):
        return check_result(op, fn(check_args(op, args)))
    run.__name__ = getattr(fn, "__name__", op)
    return run
