"""GPU timing the way the field measures: CUDA events, L2 flushed, interleaved.

Each trial writes a 256 MB buffer first (the H200's L2 is 50 MB, so nothing
the timed call reads is still cached), then times one call between two CUDA
events. Variants are interleaved trial by trial, cycling through every order
of them (`trial_orders`), so drift in clocks or temperature, and whatever one
call leaves behind for the next, hits them alike. Samples are returned raw; the
engine computes medians and confidence intervals.
"""
import collections
import itertools
import time

import torch

L2_FLUSH_BYTES = 256 * 1024 * 1024
_flush_buf = None


def flush_l2():
    global _flush_buf
    if _flush_buf is None:
        _flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    _flush_buf.zero_()


def time_once(fn, flush=True, hold_cycles=0):
    if flush:
        flush_l2()
    if hold_cycles:
        torch.cuda._sleep(hold_cycles)  # the GPU waits here while the host issues fn's work
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def trial_orders(names):
    """The orders to cycle through, trial by trial. Up to four variants: every permutation, so each
    variant runs first, and right after each other variant, equally often (a call right after a
    heavy one, e.g. eager's many kernels, can find the host's caches cold; a plain rotation of
    [eager, baseline, optimized] puts baseline after eager in two trials of three and optimized
    after baseline). More variants (a screen of many candidates): the rotations."""
    names = list(names)
    if len(names) < 2 or len(names) > 4:
        return [names[i:] + names[:i] for i in range(max(len(names), 1))]
    perms = [list(p) for p in itertools.permutations(names)]
    # chain the permutations so that the trial boundaries (the last call of one trial, the first of the
    # next, wrapping around) also give each ordered pair of different variants equally often
    per_pair = len(perms) // (len(names) * (len(names) - 1))
    chain, used, boundary = [perms[0]], {0}, collections.Counter()

    def extend():
        if len(chain) == len(perms):
            wrap = (chain[-1][-1], chain[0][0])
            return wrap[0] != wrap[1] and boundary[wrap] < per_pair
        for i, p in enumerate(perms):
            pair = (chain[-1][-1], p[0])
            if i in used or pair[0] == pair[1] or boundary[pair] >= per_pair:
                continue
            chain.append(p), used.add(i)
            boundary[pair] += 1
            if extend():
                return True
            chain.pop(), used.discard(i)
            boundary[pair] -= 1
        return False

    if not extend():  # none exists: plain permutation order (within trials still balanced)
        return perms
    return chain


def interleaved(fns, trials, warmup=3, before=None, on_gpu=True):
    """{name: [ms per trial]} for a dict of name -> zero-argument callables. On a GPU each trial is
    timed with CUDA events after an L2 flush (time_once); with on_gpu=False (Triton's interpreter,
    the CPU) by the wall clock, which only tests read: interpreter timings mean nothing."""
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            if before:
                before(n)
            fns[n]()
    if on_gpu:
        torch.cuda.synchronize()
    samples = {n: [] for n in names}
    orders = trial_orders(names)
    for t in range(trials):
        order = orders[t % len(orders)]
        for n in order:
            if before:
                before(n)
            samples[n].append(time_once(fns[n]) if on_gpu else _wall_ms(fns[n]))
    return samples


def _wall_ms(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


_cycles_per_ms = None


def _sleep_cycles_per_ms():
    """GPU clock cycles torch.cuda._sleep spins per millisecond, measured once per worker."""
    global _cycles_per_ms
    if _cycles_per_ms is None:
        cycles = 1_000_000
        ms = sorted(time_once(lambda: torch.cuda._sleep(cycles), flush=False) for _ in range(5))[2]
        _cycles_per_ms = cycles / ms
    return _cycles_per_ms


def host_ms(fn, calls=5):
    """Median host time to issue one call of fn (the GPU idle at its start), ms."""
    out = []
    for _ in range(calls):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return sorted(out)[len(out) // 2]


def host_hidden(fns, trials):
    """{name: [ms per trial]} like `interleaved`, but before each start event the GPU is held busy for
    twice the slowest variant's host time (plus 0.1 ms), so the start event fires only after the host
    has issued the whole call: what the call costs the GPU, without the host time to issue it, which
    the L2 flush hides only up to the flush's own duration. The difference to `interleaved` is the
    host time that a faster kernel cannot remove. Called after `interleaved` timed the same calls, so
    they are warm; measuring each one's host time calls it 5 more times before any timed trial."""
    hold_ms = min(2 * max(host_ms(fn) for fn in fns.values()) + 0.1, 50.0)
    hold = int(hold_ms * _sleep_cycles_per_ms())
    samples = {n: [] for n in fns}
    orders = trial_orders(fns)
    for t in range(trials):
        for n in orders[t % len(orders)]:
            samples[n].append(time_once(fns[n], hold_cycles=hold))
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


_cpu_bandwidth = None


def cpu_copy_bandwidth_gbps():
    """The CPU's copy bandwidth, wall clock, once per worker (the interpreter's stand-in figure)."""
    global _cpu_bandwidth
    if _cpu_bandwidth is None:
        a = torch.empty(1 << 24, dtype=torch.uint8)
        b = torch.empty_like(a)
        ms = sorted(interleaved({"c": lambda: b.copy_(a)}, trials=5, warmup=1, on_gpu=False)["c"])[2]
        _cpu_bandwidth = 2 * a.numel() / (ms * 1e-3) / 1e9
    return _cpu_bandwidth
