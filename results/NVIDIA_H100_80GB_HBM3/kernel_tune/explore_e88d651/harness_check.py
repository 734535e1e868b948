"""Scratch: opbench's GEMV and inductor's, timed in one Python harness (eager_reference's events method)
and by kernel duration (torch.profiler/CUPTI): is the gap the kernels' or the harnesses'?"""
import statistics, sys, pathlib, time
import torch
from torch.utils.cpp_extension import load
root = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "verify"))
from eager_reference import Flush, time_eager, random_weights
t0 = time.time()
ext = load("opbench_gemv", [str(root / "scratch/gemv_ext.cu"), str(root / "benchmarks/common/gemv_kernel.cu"),
                            str(root / "lib/check.cpp")],
           extra_include_paths=[str(root / "benchmarks"), str(root / "lib")],
           extra_cuda_cflags=["-O3", "-arch=sm_90", "-DOPBENCH_HAVE_CUDA"], extra_cflags=["-O2", "-DOPBENCH_HAVE_CUDA"], verbose=False)
print(f"extension built in {time.time() - t0:.0f} s", flush=True)
import torch._inductor.config as ic
ic.coordinate_descent_tuning = True
flush = Flush()

def kernel_us(fn, n=60):
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            torch.cuda._sleep(2_000_000); flush.flush(); fn()
        torch.cuda.synchronize()
    by = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and ("gemv" in e.name or "vector_kernel" in e.name or "triton" in e.name):
            by.setdefault(e.name, []).append(e.device_time_total if hasattr(e, 'device_time_total') else e.cuda_time_total)
    return {k[:60]: (statistics.median(v), len(v)) for k, v in by.items()}

with torch.no_grad():
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.int8, "int8")):
        for d in (1024, 4096, 8192, 16384):
            w, x = random_weights((d, d), dtype), torch.randn(d, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(d, device="cuda", dtype=torch.bfloat16)
            comp = torch.compile(lambda w, x: w.to(x.dtype) @ x, dynamic=False)
            ref = comp(w, x)
            ext.gemv(w, x, y)
            torch.testing.assert_close(y.float(), ref.float(), rtol=2e-2, atol=2e-2 * ref.float().abs().max().item())
            ours = time_eager(lambda: ext.gemv(w, x, y), 200, flush)
            ind = time_eager(lambda: comp(w, x), 200, flush)
            ours2 = time_eager(lambda: ext.gemv(w, x, y), 200, flush)
            ko, ki = kernel_us(lambda: ext.gemv(w, x, y)), kernel_us(lambda: comp(w, x))
            print(f"Gemv/{tag}/{d}: events ours {ours:.2f}/{ours2:.2f} inductor {ind:.2f} us ({100*(ind/ours-1):+.1f}%); "
                  f"kernel ours {ko} inductor {ki}", flush=True)
            torch._dynamo.reset()
