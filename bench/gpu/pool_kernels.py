"""On the GPU (usage: OUT=dir python3 bench/gpu/pool_kernels.py [fixture-substring...]): each pooling fixture's Inductor module (its autotuned kernel) against the window_rows rewrite
launched with a few configs; outputs compared bit for bit; times by kernelopt.device.timing (L2 flushed)."""
import json, os, sys, time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
from kernelopt.artifact.inductor import parse_module
from kernelopt.coder.window_rows import window_rows
from kernelopt.device import kernels
from kernel_timing import finish_row, time_configs

HEADER = ("import triton\nimport triton.language as tl\nfrom torch._inductor.runtime import triton_helpers\n"
          "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n\n")
S = os.path.join(ROOT, "tests/fixtures/inductor/survey-h100")
CASES = [("level1__50_max_pool2d_4x4_stride1", (32, 64, 512, 512), [(2048, 4), (4096, 4), (4096, 8), (8192, 8)]),
         ("level1__52_max_pool3d", (16, 32, 64, 128, 128), [(256, 2), (512, 2), (512, 4)]),
         ("level1__15_max_pool2d", (128, 128, 224, 224), [(1024, 1), (1024, 2), (2048, 4)]),
         ("level1__51_max_pool2d_dilated_ceil", (64, 128, 255, 255), [(1024, 1), (1024, 2), (2048, 4)]),
         ("level1__53_avg_pool2d_ceil_exclude_pad", (128, 128, 223, 223), [(1024, 1), (1024, 2), (2048, 4)])]
only = sys.argv[1:]
out_dir = os.environ.get("OUT", "/tmp")
results = []
for fixture, in_shape, configs in CASES:
    if only and not any(o in fixture for o in only):
        continue
    path = f"{S}/{fixture}/module0.py"
    src = open(path).read()
    k = parse_module(src)["kernels"][0]
    s, e = k["function_span"]
    name, text = k["name"], "@triton.jit\n" + src.encode()[s:e].decode()
    t0 = time.time()
    code, meta, notes = window_rows(text)
    mod = kernels.load_module(path)
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(in_shape, device="cuda", generator=gen)
    flat = x.view(-1)
    idx = torch.randint(0, flat.numel(), (flat.numel() // 1000,), device="cuda", generator=gen)
    flat[idx[: len(idx) // 2]] = float("-inf")
    flat[idx[len(idx) // 2:]] = float("nan")
    want = mod.call([x])[0]
    n = want.numel()
    extra = (27,) if "r0_numel" in text else ()
    jit = kernels.load_kernel_source(HEADER + code, name)
    row = {"fixture": fixture, "notes": notes, "meta": meta, "bytes": x.numel() * 4 + n * 4, "configs": {}}
    fns = {"inductor": lambda: mod.call([x])}
    for xb, warps in configs:
        got = torch.full_like(want, 123.0)
        launch = (lambda xb=xb, warps=warps, got=got:
                  jit[(-(-n // xb),)](x, got, n, *extra, XBLOCK=xb, num_warps=warps, num_stages=1))
        t = time.time(); launch(); torch.cuda.synchronize(); compile_s = time.time() - t
        same_bits = torch.equal(got.view(torch.int32), want.view(torch.int32))
        same = same_bits or (torch.equal(torch.isnan(got), torch.isnan(want))
                             and torch.equal(torch.nan_to_num(got), torch.nan_to_num(want)))
        key = f"XBLOCK={xb},warps={warps}"
        row["configs"][key] = {"bit_identical": same_bits, "equal": bool(same), "compile_s": round(compile_s, 1)}
        fns[key] = launch
    time_configs(row, fns, trials=30, warmup=3)
    del x, want, mod
    finish_row(row, t0, results)
json.dump(results, open(os.path.join(out_dir, "pool_gpu.json"), "w"), indent=1)
