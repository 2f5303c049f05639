"""Raw WGSL sum kernels over 1 GiB float32 on the WebGPU device, against numr's own sum and CuPy's.

Varies the workgroup count, loads in flight per iteration, grid-stride against a contiguous chunk per
workgroup, read-only against read-write bindings, vec4 loads and a subgroup reduction; then times
``xp.sum`` batched with and without a submit per call. Run on the GPU machine:
``python benchmarks/webgpu_sum_sweep.py`` (docs/benchmarks.md has its session-3 figures).
"""
import time
import numpy as np
import wgpu
import numr_array as xp
from numr_array._device import parse_device

dev = parse_device("webgpu:0"); c = dev.client; d = c.wdevice
print("adapter:", c.adapter.info.get("device"), "features:", sorted(c.features), flush=True)
N = (1 << 30) // 4
U = wgpu.BufferUsage
x = d.create_buffer(size=4 * N, usage=U.STORAGE | U.COPY_DST)
chunk = np.ones(1 << 24, np.float32)
for off in range(0, N, 1 << 24):
    d.queue.write_buffer(x, 4 * off, chunk)
part = d.create_buffer(size=4 * 65536, usage=U.STORAGE | U.COPY_SRC)
BATCH = 10

def src(G, L, mode, access, vec, sub):
    T = "vec4<f32>" if vec else "f32"
    n = N // 4 if vec else N
    red = "dot(v, vec4<f32>(1.0))" if vec else "v"
    lines = []
    if sub:
        pass
    lines.append(f"@group(0) @binding(0) var<storage, {access}> x: array<{T}>;\n"
                 "@group(0) @binding(1) var<storage, read_write> part: array<f32>;\n"
                 f"const N: u32 = {n}u; const G: u32 = {G}u;\n"
                 "var<workgroup> sh: array<f32, 256>;\n"
                 "@compute @workgroup_size(256)\n"
                 "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32"
                 + (", @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ssz: u32" if sub else "")
                 + ") {\n")
    accs = [f"a{k}" for k in range(L)]
    lines.append("".join(f"  var {a} = 0.0;\n" for a in accs))
    if mode == "stride":
        lines.append("  let step = G * 256u;\n  var r = wid.x * 256u + li;\n  let end = N;\n")
    else:  # contiguous chunk per workgroup
        lines.append("  let C = (N + G - 1u) / G;\n  let step = 256u;\n  var r = wid.x * C + li;\n"
                     "  let end = min(N, wid.x * C + C);\n")
    lines.append(f"  loop {{\n    if (r + {L - 1}u * step >= end) {{ break; }}\n")
    for k in range(L):
        lines.append(f"    {{ let v = x[r + {k}u * step]; {accs[k]} = {accs[k]} + {red}; }}\n")
    lines.append(f"    r = r + {L}u * step;\n  }}\n")
    lines.append(f"  for (; r < end; r = r + step) {{ let v = x[r]; a0 = a0 + {red}; }}\n")
    tot = " + ".join(accs)
    lines.append(f"  var acc = {tot};\n")
    if sub:
        lines.append("  acc = subgroupAdd(acc);\n  if (sid == 0u) { sh[li / ssz] = acc; }\n  workgroupBarrier();\n"
                     "  if (li == 0u) { var t = 0.0; for (var k = 0u; k < 256u / ssz; k = k + 1u) { t = t + sh[k]; }"
                     " part[wid.x] = t; }\n}\n")
    else:
        lines.append("  sh[li] = acc;\n  workgroupBarrier();\n"
                     "  for (var s = 128u; s > 0u; s = s >> 1u) { if (li < s) { sh[li] = sh[li] + sh[li + s]; }"
                     " workgroupBarrier(); }\n  if (li == 0u) { part[wid.x] = sh[0]; }\n}\n")
    return "".join(lines)

def run(G, L, mode, access, vec, sub):
    s = src(G, L, mode, access, vec, sub)
    m = d.create_shader_module(code=s)
    p = d.create_compute_pipeline(layout="auto", compute={"module": m, "entry_point": "main"})
    bg = d.create_bind_group(layout=p.get_bind_group_layout(0),
                             entries=[{"binding": 0, "resource": {"buffer": x}},
                                      {"binding": 1, "resource": {"buffer": part}}])
    def once():
        e = d.create_command_encoder()
        for _ in range(BATCH):
            cp = e.begin_compute_pass(); cp.set_pipeline(p); cp.set_bind_group(0, bg); cp.dispatch_workgroups(G); cp.end()
        d.queue.submit([e.finish()])
        d.queue.read_buffer(part, 0, 4)
    once()
    got = np.frombuffer(d.queue.read_buffer(part, 0, 4 * G), np.float32).astype(np.float64).sum()
    ts = []
    for _ in range(7):
        t = time.perf_counter(); once(); ts.append(time.perf_counter() - t)
    t = sorted(ts)[len(ts) // 2] / BATCH
    return 4 * N / t / 1e9, got

configs = []
for G in (1056, 2112, 4096, 8192):
    for L in (4, 8):
        configs.append((G, L, "stride", "read_write", False, False))
for G in (1056, 4096):
    configs.append((G, 4, "stride", "read", False, False))
    configs.append((G, 4, "chunk", "read", False, False))
    configs.append((G, 8, "chunk", "read", False, False))
    configs.append((G, 2, "stride", "read", True, False))
    configs.append((G, 4, "stride", "read", True, False))
    configs.append((G, 2, "chunk", "read", True, False))
if "subgroup" in c.features:
    configs.append((4096, 4, "stride", "read", False, True))
    configs.append((1056, 4, "chunk", "read", True, True))
for cfg in configs:
    try:
        gbps, got = run(*cfg)
        print(f"G={cfg[0]:5d} L={cfg[1]} {cfg[2]:6s} {cfg[3]:10s} vec4={cfg[4]!s:5s} sub={cfg[5]!s:5s}: {gbps:7.0f} GB/s  (sum {got:.0f} of {N})", flush=True)
    except Exception as e:
        print(cfg, "failed:", type(e).__name__, str(e)[:300], flush=True)

# the library's own sum, batched without and with a flush per call
xa = xp.ones((N,), dtype=xp.float32, device=dev)
def lib(flush):
    for _ in range(BATCH):
        xp.sum(xa)
        if flush:
            c.flush()
    c.synchronize()
for flush in (False, True):
    lib(flush); ts = []
    for _ in range(7):
        t = time.perf_counter(); lib(flush); ts.append(time.perf_counter() - t)
    print(f"xp.sum batched, flush per call={flush}: {4 * N / (sorted(ts)[len(ts) // 2] / BATCH) / 1e9:7.0f} GB/s", flush=True)
t = time.perf_counter()
for _ in range(100):
    xp.sum(xa)
print(f"host encode time of one xp.sum: {(time.perf_counter() - t) / 100 * 1e6:.1f} us", flush=True)
c.synchronize()
try:
    import cupy as cp
    xc = cp.ones((N,), cp.float32)
    def cs():
        for _ in range(BATCH): xc.sum()
        cp.cuda.Device().synchronize()
    cs(); ts = []
    for _ in range(7):
        t = time.perf_counter(); cs(); ts.append(time.perf_counter() - t)
    print(f"cupy sum: {4 * N / (sorted(ts)[len(ts) // 2] / BATCH) / 1e9:7.0f} GB/s", flush=True)
except Exception as e:
    print("cupy failed", e)
