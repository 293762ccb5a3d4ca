"""GPU timing the way the field measures: CUDA events, L2 flushed, interleaved.

Each trial writes a 256 MB buffer first (the H200's L2 is 50 MB, so nothing
the timed call reads is still cached), then times one call between two CUDA
events. Variants are interleaved trial by trial, in rotating order, so drift
in clocks or temperature hits them alike. Samples are returned raw; the
engine computes medians and confidence intervals.
"""
import torch

L2_FLUSH_BYTES = 256 * 1024 * 1024
_flush_buf = None


def flush_l2():
    global _flush_buf
    if _flush_buf is None:
        _flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    _flush_buf.zero_()


def time_once(fn, flush=True):
    if flush:
        flush_l2()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def interleaved(fns, trials, warmup=3, before=None):
    """{name: [ms per trial]} for a dict of name -> zero-argument callables."""
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            if before:
                before(n)
            fns[n]()
    torch.cuda.synchronize()
    samples = {n: [] for n in names}
    for t in range(trials):
        order = names[t % len(names):] + names[:t % len(names)]
        for n in order:
            if before:
                before(n)
            samples[n].append(time_once(fns[n]))
    return samples


_bandwidth = None


def copy_bandwidth_gbps():
    """Measured device copy bandwidth (bytes read + written per second), once per worker."""
    global _bandwidth
    if _bandwidth is None:
        a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        ms = sorted(interleaved({"copy": lambda: b.copy_(a)}, trials=10)["copy"])[5]
        _bandwidth = 2 * a.numel() / (ms * 1e-3) / 1e9
        del a, b
    return _bandwidth
