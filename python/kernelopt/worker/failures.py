"""Failures of the device rather than of what ran on it: the server answers them as such (out of memory: the
engine retries with less; a lost CUDA context: the worker exits and a fresh one starts), so an op that records
other errors as evidence (a correctness run's error) re-raises these instead (`device_failure`)."""
import sys

# CUDA errors after which the context is unusable (cudaErrorIllegalAddress and friends are "sticky")
STICKY = ("illegal memory access", "illegal instruction", "misaligned address", "unspecified launch failure",
          "device-side assert triggered", "hardware stack error", "an illegal address")


def out_of_memory(exc):
    if isinstance(exc, MemoryError):
        return True
    torch = sys.modules.get("torch")
    oom = getattr(torch, "OutOfMemoryError", None) if torch else None
    return (oom is not None and isinstance(exc, oom)) or "CUDA out of memory" in str(exc)


def context_lost(exc):
    text = str(exc).lower()
    return "cuda" in text and any(s in text for s in STICKY)


def device_failure(exc):
    return out_of_memory(exc) or context_lost(exc)
