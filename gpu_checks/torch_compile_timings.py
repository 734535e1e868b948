#!/usr/bin/env python3
"""torch.compile (inductor) beside bench_ops' cases, timed the way bench_ops times them.

gpt-fast's micro-benchmark functions (layer_norm, rms_norm as Llama writes it, gemv and gather_gemv in
bf16 and int8), each run eager and compiled with torch.compile(dynamic=False) and
torch._inductor.config.coordinate_descent_tuning = True (gpt-fast's settings), timed with
eager_timings.py's method: the stream held, the same read flush of 2x L2, events, median.

  torch_compile_timings.py --json out.json [--compare bench_ops.json] [--dims 1024,4096,8192,16384]

--compare puts each case's own kernel (`cuda` backend), ATen (`aten`), eager and inductor side by side,
with GB/s (bytes as bench_ops counts them) and the own kernel's time vs inductor's.
"""
import argparse
import json
import sys

import torch

from eager_timings import Flush, random_weights, time_eager
from opbench_tools import benchmark_json


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def rms_norm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * w


def gemv(w, x):
    return w.to(x.dtype) @ x


def gather_gemv(w, idx, x):
    return w[idx].to(x.dtype) @ x


def cases(dims):
    """(name without backend, fn, args, bytes as bench_ops counts them)."""
    for d in dims:
        x = torch.randn(4096, d, device="cuda", dtype=torch.bfloat16)
        w, b = torch.randn(d, device="cuda", dtype=torch.bfloat16), torch.randn(d, device="cuda", dtype=torch.bfloat16)
        yield f"LayerNorm/bf16/4096x{d}", layer_norm, (x, w, b), 2 * x.numel() * 2
        yield f"RMSNorm/bf16/4096x{d}", rms_norm, (x, w), 2 * x.numel() * 2
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.int8, "int8")):
        for d in dims:
            w, x = random_weights((d, d), dtype), torch.randn(d, device="cuda", dtype=torch.bfloat16)
            yield f"Gemv/{tag}/{d}", gemv, (w, x), w.numel() * w.element_size()
            we, idx = random_weights((8, d, d), dtype), torch.tensor([3, 5], device="cuda")
            yield f"GatherGemv/{tag}/{d}", gather_gemv, (we, idx, x), 2 * d * d * we.element_size()


def compare_table(ours_path, rows):
    ours = benchmark_json.medians_us(ours_path)
    print(f"{'case':28} {'cuda us':>8} {'aten us':>8} {'eager us':>8} {'induct us':>9} "
          f"{'cuda GB/s':>9} {'ind GB/s':>8} {'cuda vs ind':>11}")
    for name, nbytes, eager_us, inductor_us in rows:
        cuda_us, aten_us = ours.get(f"{name}/cuda"), ours.get(f"{name}/aten")
        fmt = lambda v: f"{v:8.2f}" if v else f"{'-':>8}"   # noqa: E731
        vs = f"{100 * (inductor_us / cuda_us - 1):+10.1f}%" if cuda_us else f"{'-':>11}"
        gbps = f"{nbytes / cuda_us / 1e3:9.0f}" if cuda_us else f"{'-':>9}"
        print(f"{name:28} {fmt(cuda_us)} {fmt(aten_us)} {fmt(eager_us)} {inductor_us:9.2f} {gbps} "
              f"{nbytes / inductor_us / 1e3:8.0f} {vs}")
    print("cuda vs ind: + means the own kernel is faster than inductor by that much")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True)
    parser.add_argument("--compare", help="bench_ops JSON to put beside")
    parser.add_argument("--dims", default="1024,4096,8192,16384")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_compile_timings.py: needs a CUDA device")
    import torch._inductor.config as inductor_config
    inductor_config.coordinate_descent_tuning = True
    flush, record, rows = Flush(), {}, []
    with torch.no_grad():
        for name, fn, fargs, nbytes in cases([int(d) for d in args.dims.split(",")]):
            compiled = torch.compile(fn, dynamic=False)
            eager_out, compiled_out = fn(*fargs), compiled(*fargs)
            torch.testing.assert_close(compiled_out.float(), eager_out.float(), rtol=2e-2, atol=2e-2 * eager_out.float().abs().max().item())
            eager_us = time_eager(lambda: fn(*fargs), args.samples, flush)
            inductor_us = time_eager(lambda: compiled(*fargs), args.samples, flush)
            record[f"{name}/eager"], record[f"{name}/inductor"] = eager_us, inductor_us
            rows.append((name, nbytes, eager_us, inductor_us))
            print(f"{name}: eager {eager_us:.2f} us, inductor {inductor_us:.2f} us", flush=True)
            torch._dynamo.reset()
    with open(args.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "median_us": record}, f, indent=1)
    if args.compare:
        compare_table(args.compare, rows)


if __name__ == "__main__":
    main()
