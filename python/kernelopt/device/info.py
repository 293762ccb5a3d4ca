"""Versions and device facts every input kind's answers carry, and the error a run on a missing GPU gets."""
import sys


class NoGpuError(Exception):
    kind = "no_gpu"


def versions():
    """torch, triton and Python versions, and the GPU and CUDA version where there is one."""
    import torch
    import triton
    v = {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]}
    if torch.cuda.is_available():
        v["gpu"] = torch.cuda.get_device_name()
        v["cuda"] = torch.version.cuda
    return v
