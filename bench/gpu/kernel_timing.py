"""What the kernel scripts here (copy_kernels, pool_kernels, row_kernels) share: Inductor's kernel and each
config timed interleaved (kernelopt.device.timing, L2 flushed), medians and GB/s over the row's bytes put on
the row, the row printed and kept, the device memory given back."""
import json
import statistics
import time

import torch

from kernelopt.device import timing


def time_configs(row, fns, trials, warmup):
    """fns: {"inductor": launch, config key: launch}; row["configs"][key] exists for each config."""
    samples = timing.interleaved(fns, trials=trials, warmup=warmup)
    for key, ms in samples.items():
        med = statistics.median(ms)
        figures = {"ms": round(med, 4), "gbps": round(row["bytes"] / med / 1e6, 1)}
        (row.setdefault("inductor", {}) if key == "inductor" else row["configs"][key]).update(figures)


def finish_row(row, started, results):
    row["wall_s"] = round(time.time() - started, 1)
    print(json.dumps(row), flush=True)
    results.append(row)
    torch.cuda.empty_cache()
