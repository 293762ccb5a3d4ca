import sys,glob,statistics,json;sys.path.insert(0,"python")
import torch
from kernelopt.device import kernels,timing
H="import triton\nimport triton.language as tl\n\n"
K=open(sys.argv[1]).read()
N="triton_poi_fused_convolution_0"
for f,n,hw in [("level2__23",256,262144),("level3__08",32,50176),("level3__12",160,25600)]:
 p=glob.glob(f"tests/fixtures/inductor/survey-h100/{f}*/module0.py")[0]
 m=kernels.load_module(p);ind=getattr(m,N)
 code=K.replace("768",str(3*n)).replace("262144",str(hw)).replace("786432",str(3*hw))
 j=kernels.load_kernel_source(H+code,N)
 x=torch.randn(n*3*hw,device="cuda");x[::997]=float("nan");x[5::1001]=-0.0;x[7::999]=float("inf")
 w=torch.empty_like(x);s=torch.cuda.current_stream().cuda_stream
 ind.run(x,w,3*n,hw,stream=s);torch.cuda.synchronize()
 fns={"ind":lambda:ind.run(x,w,3*n,hw,stream=s)};r={}
 for xb,yb,nw in [(256,8,4),(512,8,4),(1024,4,4),(256,16,4),(1024,8,8)]:
  g=torch.full_like(x,123.0)
  L=lambda xb=xb,yb=yb,nw=nw,g=g:j[(-(-hw//xb),-(-3*n//yb))](x,g,3*n,hw,YBLOCK=yb,XBLOCK=xb,num_warps=nw)
  L();torch.cuda.synchronize();k=f"{xb},{yb},{nw}";r[k]=[torch.equal(g.view(torch.int32),w.view(torch.int32))];fns[k]=L
 t=timing.interleaved(fns,trials=20,warmup=3)
 for k,v in t.items():
  ms=statistics.median(v);gb=round(8*x.numel()/ms/1e6)
  if k=="ind":r[k]=[ms,gb]
  else:r[k]+=[round(ms,4),gb]
 print(f,json.dumps(r),flush=True)
