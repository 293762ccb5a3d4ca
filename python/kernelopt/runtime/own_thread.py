"""Calls run on a thread of their own, for state PyTorch keeps per thread.

PyTorch's cuDNN convolutions keep their execution plans in a per-thread cache (aten/src/ATen/native/cudnn/
Conv_v8.cpp), found by each convolution shape's first call on that thread, with cuDNN's autotuning
(torch.backends.cudnn.benchmark) or without it, and looked up before the flag is read. So a model autotuned
in a process that already ran the same convolutions with heuristics' plans (torch.compile default before it,
as every gate does) would run those same plans, unless its calls run on a thread of their own.

The caller's per-thread state that a call depends on goes with it: grad mode, inference mode and the current
CUDA stream (and so device). The caller waits for each call; an exception is raised again on its thread.
"""
import atexit
import contextlib
import queue
import threading
import weakref

import torch

_STOP = object()
_LIVE = weakref.WeakSet()  # OwnThread objects not yet collected, whose threads atexit ends


@atexit.register
def _end_all():
    # ended and joined before the interpreter finalizes: a thread left waiting in torch's runtime then
    # could abort the process at exit
    for own in list(_LIVE):
        own.end()


def _run(fn, grad, inference, stream):
    try:
        with contextlib.ExitStack() as modes:
            if inference:  # only then: inference_mode(False) would turn grad mode on
                modes.enter_context(torch.inference_mode())
            modes.enter_context(torch.set_grad_enabled(grad))
            if stream is not None:
                modes.enter_context(torch.cuda.stream(stream))
            return True, fn()
    except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
        return False, exc


def _serve(calls, results):
    while True:
        item = calls.get()
        if item is _STOP:
            return
        results.put(_run(*item))
        # the call (its arguments, and the model it closes over) is not kept alive until the next one
        del item


class OwnThread:
    """One thread of its own; `call(fn)` runs fn() there and returns its result. The thread ends when this
    object is collected."""

    def __init__(self, name="kernelopt-own-thread"):
        calls, results = queue.SimpleQueue(), queue.SimpleQueue()
        self._calls, self._results = calls, results
        self._lock = threading.Lock()  # one call at a time: results come back in order
        self.thread = threading.Thread(target=_serve, args=(calls, results), name=name, daemon=True)
        self.thread.start()
        weakref.finalize(self, calls.put, _STOP)
        _LIVE.add(self)

    def end(self, timeout=10):
        self._calls.put(_STOP)
        self.thread.join(timeout)

    def call(self, fn):
        stream = torch.cuda.current_stream() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
        with self._lock:
            self._calls.put((fn, torch.is_grad_enabled(), torch.is_inference_mode_enabled(), stream))
            ok, value = self._results.get()
        if not ok:
            raise value
        return value

