"""The worker protocol's one definition (python/kernelopt/worker/protocol.json), as the worker checks it:
every op of the table is defined there, a request gets its defaults from there and nowhere else, a wrong
request is answered as a protocol error naming the argument, and the tolerances are the engine's."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from kernelopt.worker import protocol  # noqa: E402
from kernelopt.worker.ops import TABLE  # noqa: E402

SCHEMA_FILE = os.path.join(ROOT, "python", "kernelopt", "worker", "protocol.json")


def test_every_op_of_the_table_is_defined_once_in_the_schema():
    from kernelopt.worker import server
    server_ops = {"hello", "echo"} | set(server._test_ops())
    assert "_phased" in server_ops
    assert set(TABLE) | server_ops == protocol.ops()


def test_a_request_gets_the_schemas_defaults_and_keeps_what_it_gave():
    args = protocol.check_args("bench", {"problem": "/p.py", "candidates": ["/c.py"], "trials": 7})
    assert args["trials"] == 7
    assert (args["warmup"], args["mode"], args["restore"], args["module"]) == (3, "kernel", True, 0)
    assert (args["device"], args["seeds"], args["input_kind"]) == ("cuda", [0, 1, 2], "module")


def test_without_jsonschema_the_worker_still_fills_the_defaults_and_the_engine_alone_checks(monkeypatch):
    # the GPU machine's image may lack jsonschema and nothing can be installed there: the worker must still run
    monkeypatch.setattr(protocol, "jsonschema", None)
    monkeypatch.setattr(protocol, "_VALIDATORS", {})
    assert not protocol.checking()
    args = protocol.check_args("bench", {"problem": "/p.py", "candidates": ["/c.py"]})
    assert (args["warmup"], args["mode"], args["seeds"]) == (3, "kernel", [0, 1, 2])
    assert protocol.check_args("bench", {"problem": "/p.py", "candidates": ["/c.py"], "mode": "graph"})["mode"] == "graph"
    with pytest.raises(protocol.ProtocolError, match="unknown op"):
        protocol.check_args("no_such_op", {})


@pytest.mark.parametrize("op, args, message", [
    ("check", {"kernel": "k", "candidate_module": "/c.py"}, "check request: 'tolerances' is a required property"),
    ("check", {"kernel": "k", "candidate_module": "/c.py", "atol": 1e-4, "rtol": 1e-4,
               "tolerances": {"float32": {"atol": 1e-4, "rtol": 1e-4}}},
     "check request: Additional properties are not allowed ('atol', 'rtol' were unexpected)"),
    ("bench", {"problem": "/p.py", "candidates": ["/c.py"], "mode": "graph"},
     "bench request mode: 'graph' is not one of ['kernel', 'model']"),
    ("no_such_op", {}, "unknown op 'no_such_op'"),
])
def test_a_wrong_request_is_refused_naming_what_is_wrong(op, args, message):
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.check_args(op, args)
    assert str(err.value) == message


def test_the_worker_answers_a_wrong_request_as_a_protocol_error_and_says_its_schema():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.Popen([sys.executable, "-m", "kernelopt.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        def ask(rid, op, args):
            proc.stdin.write(json.dumps({"id": rid, "op": op, "args": args}) + "\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())
        hello = ask(1, "hello", {})
        with open(SCHEMA_FILE, "rb") as f:
            assert hello["result"]["schema"] == hashlib.sha256(f.read()).hexdigest()
        bad = ask(2, "analyze", {"source": "x = 1", "grid": ["n"], "grid_names": "n"})
        assert {k: bad[k] for k in ("id", "ok", "kind", "error")} == {"id": 2, "ok": False, "kind": "protocol",
                       "error": "analyze request grid_names: 'n' is not of type 'array'"}
        good = ask(3, "analyze", {"source": "x = 1", "grid": ["n"]})  # grid_names: the schema's default, []
        assert good["ok"] and good["result"]["grid_violations"] == ["grid[0] 'n': n is not allowed "
                                                                    "(integers, no names, + - * // % only)"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_the_tolerance_of_a_dtype_is_the_engines_never_the_workers():
    torch = pytest.importorskip("torch")
    from kernelopt.gates.compare import tolerance_for
    table = {"float32": {"atol": 1e-4, "rtol": 2e-4}, "float16": {"atol": 0.5, "rtol": 0.25},
             "bfloat16": {"atol": 0.125, "rtol": 0.0625}}
    assert tolerance_for(torch.float16, table) == (0.5, 0.25)
    assert tolerance_for(torch.bfloat16, table) == (0.125, 0.0625)
    assert tolerance_for(torch.float64, table) == (1e-4, 2e-4)  # another floating dtype: float32's
    assert tolerance_for(torch.int32, table) == (0.0, 0.0)


def test_an_error_wrapped_with_a_traceback_says_its_cause_in_its_one_line():
    """Inductor's compile subprocess wraps the real error (here a static_assert of a rewrite's pinned block
    size) under a traceback: the reply's line keeps its first line and adds the cause, its last."""
    from torch._inductor.compile_worker.subproc_pool import SubprocException
    from kernelopt.worker.server import _message
    details = ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    compile()\n'
               'triton.compiler.errors.CompilationError: at 12:4:\n    tl.static_assert(XBLOCK == 24576)\n    ^\n'
               'Static assert failed')
    line = _message(SubprocException(details))
    assert line == "SubprocException: An exception occurred in a subprocess: [...] Static assert failed", line
    assert _message(ValueError("one line")) == "ValueError: one line"
    assert _message(ValueError("first\nsecond")) == "ValueError: first [...]"
