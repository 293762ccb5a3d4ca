"""On the GPU (usage: OUT=dir python3 bench/gpu/row_kernels.py [fixture-substring...]): long-row reductions'
Inductor kernels against the row_stream rewrite (over reverse_pass) at several rows-per-program (XBLOCK: the
number of programs, so of rows in flight, is rows / XBLOCK), R0_BLOCK and num_warps. Outputs compared with the
Inductor module's (allclose at 1e-5); times by kernelopt.device.timing (L2 flushed), GB/s over the minimum
bytes (input read once, output written once). Prints one JSON line per fixture; OUT/row_kernels.json."""
import json, os, sys, time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
from kernelopt.artifact.inductor import parse_module
from kernelopt.coder.reverse_pass import reverse_pass
from kernelopt.coder.row_stream import row_stream_reversed
from kernelopt.device import kernels
from kernel_timing import finish_row, time_configs

HEADER = ("import triton\nimport triton.language as tl\nfrom torch._inductor.runtime import triton_helpers\n"
          "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n\n")
S = os.path.join(ROOT, "tests/fixtures/inductor/survey-h100")
# fixture, input shapes (first is the tensor; the rest parameters), rows, row length
CASES = [("level1__39_log_softmax_long_row", [(3072, 393216)], 3072, 393216),
         ("level1__13_instance_norm", [(128, 64, 320, 320), (64,), (64,)], 8192, 102400),
         ("level1__07_softmax_long_row", [(4096, 393216)], 4096, 393216)]
CONFIGS = [(1, 2048, 16), (8, 2048, 16), (16, 2048, 16), (32, 2048, 16), (64, 2048, 16), (128, 2048, 16),
           (32, 4096, 16), (64, 4096, 32), (128, 4096, 32), (256, 4096, 32)]
only = sys.argv[1:]
out_dir = os.environ.get("OUT", "/tmp")
results = []
for fixture, shapes, rows, row_len in CASES:
    if only and not any(o in fixture for o in only):
        continue
    path = f"{S}/{fixture}/module0.py"
    src = open(path).read()
    k = parse_module(src)["kernels"][0]
    s, e = k["function_span"]
    name, text = k["name"], "@triton.jit\n" + src.encode()[s:e].decode()
    t0 = time.time()
    variants = {"reverse_pass": reverse_pass(text)[0], "row_stream": row_stream_reversed(text)[0]}
    mod = kernels.load_module(path)
    gen = torch.Generator(device="cuda").manual_seed(0)
    args = [torch.randn(sh, device="cuda", generator=gen) for sh in shapes]
    want = mod.call(list(args))[0]
    row = {"fixture": fixture, "bytes": args[0].numel() * 4 + want.numel() * 4, "configs": {}}
    fns = {"inductor": lambda: mod.call(list(args))}
    for variant, code in variants.items():
        jit = kernels.load_kernel_source(HEADER + code, name)
        for xb, rb, warps in CONFIGS:
            if variant == "reverse_pass" and xb != 1:
                continue
            got = torch.empty_like(want)
            launch = (lambda jit=jit, xb=xb, rb=rb, warps=warps, got=got:
                      jit[(-(-rows // xb),)](*args, got, rows, row_len, XBLOCK=xb, R0_BLOCK=rb,
                                             num_warps=warps, num_stages=1))
            key = f"{variant} XBLOCK={xb} R0_BLOCK={rb} w{warps}"
            try:
                launch(); torch.cuda.synchronize()
                ok = bool(torch.allclose(got, want, atol=1e-5, rtol=1e-5))
            except Exception as exc:  # a config that does not compile (registers) is reported, not fatal
                row["configs"][key] = {"error": str(exc).splitlines()[0][:200]}
                continue
            row["configs"][key] = {"programs": -(-rows // xb), "close": ok}
            fns[key] = launch
    time_configs(row, fns, trials=15, warmup=2)
    del args, want, mod
    finish_row(row, t0, results)
json.dump(results, open(os.path.join(out_dir, "row_kernels.json"), "w"), indent=1)
