"""A sticky CUDA error (the context is lost) ends the worker process instead of being answered.

Seen on the H200 in the adversarial suite: after a candidate read unmapped memory, every later op of
that worker failed with "CUDA error: an illegal memory access was encountered" and the failures were
recorded against the next candidates. The worker now exits (code 70) on such an error, so the engine
records a worker crash for the request that caused it and starts a fresh worker. The errors are
raised here through the worker's test ops; no GPU is needed.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def worker():
    env = dict(os.environ, KERNELOPT_WORKER_TEST_OPS="1", PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.Popen([sys.executable, "-m", "kernelopt.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def ask(proc, rid, op, args):
    proc.stdin.write(json.dumps({"id": rid, "op": op, "args": args}) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    return json.loads(line) if line else None


def test_sticky_cuda_error_ends_the_worker_without_an_answer():
    proc = worker()
    try:
        assert ask(proc, 1, "_fail", {"message": "CUDA error: an illegal memory access was encountered"}) is None
        assert proc.wait(timeout=60) == 70
        assert "CUDA context lost during _fail" in proc.stderr.read()
    finally:
        proc.kill()


def test_other_errors_are_answered_and_the_worker_goes_on():
    proc = worker()
    try:
        for message in ("CUDA error: out of memory", "illegal memory access in a message without the word"):
            reply = ask(proc, 1, "_fail", {"message": message})
            assert reply["ok"] is False and message.split(":")[0] in reply["error"]
        assert ask(proc, 2, "echo", {"x": 1})["ok"] is True
        assert proc.poll() is None
    finally:
        proc.kill()
