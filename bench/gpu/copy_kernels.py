"""On the GPU (usage: OUT=dir python3 bench/gpu/copy_kernels.py [fixture-substring...]): each channels-last input
copy's Inductor kernel (its autotuned `triton_poi_fused_convolution_0` from the captured module) against the
channel_copy rewrite launched with a few configs; outputs compared bit for bit (NaN, infinities and -0.0 among
the inputs); times by kernelopt.device.timing (L2 flushed); GB/s counts one read and one write of the tensor.
Writes OUT/copy_gpu.json; about 30 s on an H100."""
import json, os, sys, time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch
from kernelopt.artifact.inductor import parse_module
from kernelopt.coder.channel_copy import channel_copy
from kernelopt.device import kernels
from kernel_timing import finish_row, time_configs

HEADER = ("import triton\nimport triton.language as tl\nfrom torch._inductor.runtime import triton_helpers\n"
          "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n\n")
S = os.path.join(ROOT, "tests/fixtures/inductor/survey-h100")
NAME = "triton_poi_fused_convolution_0"
# (fixture, samples N, positions HW); the input is N x 3 x HW fp32
CASES = [("level2__23_patchify_conv_layernorm_nhwc", 256, 512 * 512),
         ("level3__08_vit_patch_embed_block", 32, 224 * 224),
         ("level3__12_small_cnn_classifier", 160, 160 * 160),
         ("level3__09_vgg_two_stages", 16, 224 * 224)]
CONFIGS = [(256, 8, 4), (512, 8, 4), (1024, 4, 4), (256, 16, 4), (1024, 8, 8)]  # (XBLOCK, YBLOCK, num_warps)
only = sys.argv[1:]
out_dir = os.environ.get("OUT", "/tmp")
results = []
for fixture, n, hw in CASES:
    if only and not any(o in fixture for o in only):
        continue
    path = f"{S}/{fixture}/module0.py"
    src = open(path).read()
    k = next(k for k in parse_module(src)["kernels"] if k["name"] == NAME)
    s, e = k["function_span"]
    t0 = time.time()
    code, meta, notes = channel_copy("@triton.jit\n" + src.encode()[s:e].decode())
    mod = kernels.load_module(path)
    inductor = getattr(mod, NAME)  # Inductor's CachingAutotuner: .run autotunes on its first call
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n * 3 * hw, device="cuda", generator=gen)
    idx = torch.randint(0, x.numel(), (x.numel() // 1000,), device="cuda", generator=gen)
    third = len(idx) // 3
    x[idx[:third]], x[idx[third:2 * third]], x[idx[2 * third:]] = float("nan"), float("-inf"), -0.0
    want = torch.empty_like(x)
    stream = torch.cuda.current_stream().cuda_stream
    inductor.run(x, want, 3 * n, hw, stream=stream)
    torch.cuda.synchronize()
    ref = x.view(n, 3, hw).permute(0, 2, 1).contiguous().view(torch.int32)  # bits: NaN == NaN
    assert torch.equal(want.view(n, hw, 3).view(torch.int32), ref), "Inductor's kernel is not this copy"
    jit = kernels.load_kernel_source(HEADER + code, NAME)
    row = {"fixture": fixture, "notes": notes, "meta": meta, "bytes": 2 * x.numel() * 4, "configs": {}}
    fns = {"inductor": lambda: inductor.run(x, want, 3 * n, hw, stream=stream)}
    for xb, yb, warps in CONFIGS:
        got = torch.full_like(x, 123.0)
        launch = (lambda xb=xb, yb=yb, warps=warps, got=got:
                  jit[(-(-hw // xb), -(-3 * n // yb))](x, got, 3 * n, hw, YBLOCK=yb, XBLOCK=xb, num_warps=warps))
        t = time.time(); launch(); torch.cuda.synchronize(); compile_s = time.time() - t
        key = f"XBLOCK={xb},YBLOCK={yb},warps={warps}"
        row["configs"][key] = {"bit_identical": torch.equal(got.view(torch.int32), want.view(torch.int32)),
                               "compile_s": round(compile_s, 1)}
        fns[key] = launch
    time_configs(row, fns, trials=30, warmup=3)
    del x, want, mod
    finish_row(row, t0, results)
json.dump(results, open(os.path.join(out_dir, "copy_gpu.json"), "w"), indent=1)
