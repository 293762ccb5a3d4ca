"""JSON-lines server over stdio: the only way the engine talks to PyTorch/Triton.

Protocol (version PROTOCOL_VERSION):
  request  {"id": int, "op": str, "args": {...}}           one per line on stdin
  response {"id": int, "ok": true, "result": {...}}          one per line on stdout
           {"id": int, "ok": false, "error": str, "kind": str}
           either may add "peak_bytes" (the op's peak device memory) and "phases_s" (worker/phases.py)
The first request is {"op": "hello"}; its result carries "protocol" and the
worker's pid. Errors are data: an op that raises answers ok=false and the
worker stays up. Large payloads (tensors, sources) travel as file paths.
Anything an op prints goes to stderr, so stdout carries protocol lines only.
"""
import json
import os
import sys
import traceback

from kernelopt.worker import failures, phases

PROTOCOL_VERSION = 2


def _op_hello(args):
    from kernelopt.worker.protocol import SCHEMA_SHA256
    return {"protocol": PROTOCOL_VERSION, "pid": os.getpid(), "python": sys.version.split()[0], "schema": SCHEMA_SHA256}


def _op_echo(args):
    return {"echo": args}


def _test_ops():
    """Ops that misbehave on purpose, for the engine's pool tests (KERNELOPT_WORKER_TEST_OPS=1)."""
    import time

    def crash(args):
        os._exit(int(args.get("code", 3)))

    def hang(args):
        time.sleep(float(args.get("seconds", 3600)))
        return {}

    def fail(args):
        raise RuntimeError(args.get("message", "requested failure"))

    def phased(args):  # two nested phases of args.ms each, then fails if asked: its phases are sent either way
        pause = float(args.get("ms", 0)) / 1000
        with phases.phase("outer"):
            time.sleep(pause)
            with phases.phase("inner"):
                time.sleep(pause)
        if args.get("fail"):
            raise RuntimeError("failed after its phases")
        return {}

    return {"_crash": crash, "_hang": hang, "_fail": fail, "_phased": phased}


def _ops():
    from kernelopt.worker import ops  # imports torch lazily inside each op
    from kernelopt.worker.protocol import checked
    own = {"hello": _op_hello, "echo": _op_echo}
    if os.environ.get("KERNELOPT_WORKER_TEST_OPS") == "1":
        own.update(_test_ops())
    table = {op: checked(op, fn) for op, fn in own.items()}
    table.update(ops.TABLE)
    return table


def main():
    proto_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints go to stderr
    table = _ops()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            rid = req.get("id")
        except json.JSONDecodeError as exc:
            proto_out.write(json.dumps({"id": None, "ok": False, "error": f"bad request: {exc}",
                                        "kind": "protocol"}) + "\n")
            continue
        op = table.get(req.get("op"))
        out_of_memory = False
        if op is None:
            resp = {"id": rid, "ok": False, "error": f"unknown op {req.get('op')!r}", "kind": "protocol"}
        else:
            _reset_peak()
            phases.reset()
            try:
                _inject_oom(req.get("op"))
                resp = {"id": rid, "ok": True, "result": op(req.get("args") or {})}
            except Exception as exc:  # errors are data for the engine
                out_of_memory = failures.out_of_memory(exc)
                if out_of_memory:
                    # the device's memory, not the candidate: say so (the engine retries with less at once)
                    resp = {"id": rid, "ok": False, "kind": "out_of_memory",
                            "error": f"out of memory in {req.get('op')}: {_message(exc)}"}
                elif failures.context_lost(exc):
                    # a sticky CUDA error: every later op of this process would fail with it and be
                    # blamed on the wrong candidate; die now, as a segfault would, so the engine
                    # records a worker crash for this request and starts a fresh worker
                    sys.stderr.write(f"kernelopt worker: CUDA context lost during {req.get('op')}: {_message(exc)}\n")
                    sys.stderr.flush()
                    os._exit(CONTEXT_LOST_EXIT)
                else:
                    resp = {"id": rid, "ok": False, "error": _message(exc),
                            "kind": getattr(exc, "kind", "exception"),
                            "traceback": traceback.format_exc(limit=8)}
                _log_failure(req.get("op"), resp)
        peak = _peak()
        if peak is not None:
            resp["peak_bytes"] = peak
        spent = phases.seconds() if op is not None else None
        if spent:
            resp["phases_s"] = spent
        proto_out.write(json.dumps(resp, default=_json_default) + "\n")
        if out_of_memory:
            _release_memory()  # outside the handler: the exception's frames no longer hold the op's tensors


CONTEXT_LOST_EXIT = 70
_injected_ooms = {}


def _log_failure(op, resp):
    """A failed op in the worker's log, with the traceback: the engine shows one line, the log keeps the rest.
    Only where stderr is a log (the engine sets KERNELOPT_WORKER_LOG=1 when it sends stderr to the run's
    logs/worker.log), not on a user's terminal (inspect, doctor)."""
    if os.environ.get("KERNELOPT_WORKER_LOG") != "1":
        return
    sys.stderr.write(f"kernelopt worker: op {op!r} failed ({resp['kind']}): {resp['error']}\n")
    if resp.get("traceback"):
        sys.stderr.write(resp["traceback"])
    sys.stderr.flush()


def _inject_oom(op):
    """KERNELOPT_FAULT_OOM=OP[:N] makes the first N requests of OP (every one without N) fail as the device
    running out of memory would: the engine's handling of it is tested on machines with memory to spare."""
    spec = os.environ.get("KERNELOPT_FAULT_OOM", "")
    name, _, count = spec.partition(":")
    if not name or name != op:
        return
    done = _injected_ooms.get(op, 0)
    if count and done >= int(count):
        return
    _injected_ooms[op] = done + 1
    raise MemoryError(f"injected by KERNELOPT_FAULT_OOM ({done + 1}{'/' + count if count else ''})")


def _cuda():
    """torch.cuda once an op has imported torch and a GPU is there; None otherwise (hello, the CPU)."""
    torch = sys.modules.get("torch")
    return torch.cuda if torch is not None and torch.cuda.is_available() else None


def _reset_peak():
    cuda = _cuda()
    if cuda is not None:
        cuda.reset_peak_memory_stats()


def _peak():
    """The op's peak device memory, bytes (what the engine reports per op and the run's peak)."""
    cuda = _cuda()
    return int(cuda.max_memory_allocated()) if cuda is not None else None


def _release_memory():
    """Drops what a failed op left (its traceback's frames hold its tensors) and the allocator's cache."""
    import gc
    sys.last_traceback = sys.last_value = None
    gc.collect()
    cuda = _cuda()
    if cuda is not None:
        cuda.empty_cache()
def _message(exc):
    """The error's one line. An exception with a `kind` (ProblemError, CaptureError, NoGpuError, ...)
    carries a sentence written for the user, sent as is; any other is prefixed with its type."""
    text = str(exc) if hasattr(type(exc), "kind") else f"{type(exc).__name__}: {exc}"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if len(lines) == 1:
        return lines[0]
    # a wrapped exception (Inductor's compile subprocess: "An exception occurred in a subprocess:" and a
    # traceback) names its cause only on its last line
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        return f"{lines[0]} [...] {lines[-1].strip()}"
    return lines[0] + " [...]"


def _json_default(obj):
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


if __name__ == "__main__":
    main()
