@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 768
    xnumel = 262144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    _kc_channel = tl.arange(0, 4)[None, :]
    _kc_first = tl.program_id(1) * ((YBLOCK + 2) // 3)
    for _kc_sample in tl.range(0, (YBLOCK + 2) // 3):
        y1 = _kc_first + _kc_sample
        y0 = _kc_channel
        yindex = 3 * y1 + y0
        ymask = (y0 < 3) & (yindex < ynumel)
        x2 = xindex
        y3 = yindex
        tmp0 = tl.load(in_ptr0 + (x2 + 262144 * y3), xmask & ymask, eviction_policy='evict_last')
        tl.store(out_ptr0 + (y0 + 3 * x2 + 786432 * y1), tmp0, xmask & ymask)
