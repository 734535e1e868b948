#!/usr/bin/env python3
"""PyTorch eager reference timings for bench_ops cases, measured the way bench_ops measures.

Per sample: hold the stream with torch.cuda._sleep (so Python launch latency is not timed, as bench_ops'
blocking kernel does), read a buffer of 2x L2 (bench_ops' flush is a read too: L2 is left holding clean
lines, never dirty ones the timed op would pay to write back), record a start event, run the op, record
a stop event, synchronize. The figure is the median over --samples samples.

  eager_timings.py --family layer_norm --json out.json [--compare bench_ops.json] [--tolerance-pct 3]

--compare reads a bench_ops JSON (Google Benchmark format) and prints bench_ops vs eager per case;
exit 1 when any case differs by more than the tolerance.
"""
import argparse
import ctypes
import json
import statistics
import sys

import torch

from opbench_tools import benchmark_json


class Flush:
    """Reads a zeroed buffer of 2x L2 on the current stream (a sum into one float), as bench_ops' flush
    reads its buffer: afterwards L2 holds only clean lines of it. Lines an earlier kernel read with an L2
    evict_last hint (inductor reads x so) survive such a read; bench_ops' flush demotes them on the
    device, this one first sets them back to normal priority from the host (cuCtxResetPersistingL2Cache:
    the GPU is idle or spinning in the hold then, so nothing else is touched)."""

    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.buffer = torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.float32, device="cuda")
        self._reset = ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache

    def flush(self):
        status = self._reset()
        if status != 0:
            raise RuntimeError(f"cuCtxResetPersistingL2Cache failed: CUresult {status}")
        torch.sum(self.buffer, dim=0, out=self.sink)


# GPU cycles of the hold before each sample: ~1 ms, longer than a compiled function's Python dispatch
# (with a 100 us hold, inductor's 1024-wide cases can read 5x slow).
HOLD_CYCLES = 2_000_000


def time_eager(fn, samples, flush):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times_us = []
    for _ in range(samples):
        torch.cuda._sleep(HOLD_CYCLES)  # the op is enqueued before the GPU gets there
        flush.flush()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times_us.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times_us)


def layer_norm_cases():
    for dim in (1024, 4096, 8192, 16384):
        mod = torch.nn.LayerNorm(dim).cuda().bfloat16()
        x = torch.randn(4096, dim, device="cuda", dtype=torch.bfloat16)
        yield f"LayerNorm/bf16/4096x{dim}/aten", (lambda m=mod, x=x: m(x))


SHAPES = (1024, 4096, 8192, 16384)


def random_weights(shape, dtype):
    if dtype == torch.int8:
        return torch.randint(-127, 128, shape, device="cuda", dtype=torch.int8)
    return torch.randn(shape, device="cuda", dtype=dtype)


def gemv_cases():
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.int8, "int8")):
        for dim in SHAPES:
            w = random_weights((dim, dim), dtype)
            x = torch.randn(dim, device="cuda", dtype=torch.bfloat16)
            yield f"Gemv/{tag}/{dim}/aten", (lambda w=w, x=x: w.to(x.dtype) @ x)


def gather_gemv_cases():
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.int8, "int8")):
        for dim in SHAPES:
            w = random_weights((8, dim, dim), dtype)
            x = torch.randn(dim, device="cuda", dtype=torch.bfloat16)
            idx = torch.tensor([3, 5], device="cuda")
            yield f"GatherGemv/{tag}/{dim}/aten", (lambda w=w, x=x, idx=idx: w[idx].to(x.dtype) @ x)


def mlp_cases():
    hidden = 14336
    for dim in SHAPES:
        mod = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.LayerNorm(hidden),
                                  torch.nn.Linear(hidden, dim), torch.nn.LayerNorm(dim)).cuda().bfloat16()
        x = torch.randn(dim, device="cuda", dtype=torch.bfloat16)
        yield f"MLP/bf16/{dim}/aten", (lambda m=mod, x=x: m(x))


FAMILIES = {"layer_norm": layer_norm_cases, "gemv": gemv_cases, "gather_gemv": gather_gemv_cases,
            "mlp": mlp_cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append", required=True)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--json", help="write {case: median_us} here")
    parser.add_argument("--compare", help="bench_ops JSON to compare with")
    parser.add_argument("--tolerance-pct", type=float, default=3.0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("eager_timings.py: needs a CUDA device")
    flush = Flush()
    eager = {}
    for family in args.family:
        for name, fn in FAMILIES[family]():
            with torch.no_grad():
                eager[name] = time_eager(fn, args.samples, flush)
    record = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "median_us": eager}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    worst = 0.0
    if args.compare:
        ours = benchmark_json.medians_us(args.compare)
        print(f"{'case':36} {'bench_ops us':>12} {'eager us':>10} {'diff %':>7}")
        for name, eager_us in eager.items():
            if name not in ours:
                print(f"{name:36} {'missing':>12} {eager_us:10.2f}")
                worst = float("inf")
                continue
            diff = 100 * (ours[name] - eager_us) / eager_us
            worst = max(worst, abs(diff))
            print(f"{name:36} {ours[name]:12.2f} {eager_us:10.2f} {diff:7.2f}")
        print(f"worst |diff| {worst:.2f}% (tolerance {args.tolerance_pct}%) on {record['device']}")
    else:
        print(json.dumps(record, indent=1))
    sys.exit(1 if worst > args.tolerance_pct else 0)


if __name__ == "__main__":
    main()
