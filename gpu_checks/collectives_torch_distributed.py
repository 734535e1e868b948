"""The Collective family's Python peer: the same collectives through torch.distributed, timed the way the
issue's figures were taken, printed beside bench_ops' own figures.

    torchrun --standalone --nproc-per-node=N gpu_checks/collectives_torch_distributed.py \\
        [--compare bench_ops.json] [--json FILE] [--ops all_reduce,all_gather] [--max-bytes 1GiB]

Every rank runs all_reduce (sum), all_gather, reduce_scatter (sum), all_to_all (equal shares) and
broadcast (root 0) in bf16 and fp32 at 8 B, 64 B, ... 1 GiB (x8 steps), with nccl-tests' message sizes
(the same as bench_ops' Collective cases: benchmarks/collective/collective_ops.h). A figure is the mean
of 20 back-to-back calls after 5 warm-ups, timed with CUDA events around the 20 (on the CPU: the host
clock, each call waited for); algorithm bandwidth = size / time, bus bandwidth = that x nccl-tests'
factor (all_reduce 2(n-1)/n, all_gather / reduce_scatter / all_to_all (n-1)/n, broadcast 1; "-" where
the factor is 0, a world of one). The eager latency is the 8-byte all_reduce's time per call: a host
that launches 20 tiny collectives back to back is timed on its launches.

Rank 0 prints the table. --compare FILE (bench_ops' --benchmark_out JSON of the same world) adds bench_ops'
bus bandwidth and the ratio bench_ops / Python per op x dtype x size, and the graph-mode 8 B all_reduce
time (Collective/<dtype>/8B/all_reduce_graph) against Python's eager latency. --json FILE writes the
figures (and the comparison). NCCL_NVLS_ENABLE=0 unless set. --backend gloo --device cpu runs on the CPU
(the tests do so with tiny sizes)."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(text):
    for unit in sorted(UNITS, key=len, reverse=True):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * UNITS[unit]
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text}: expected bytes, e.g. 8, 4KiB, 1GiB")


def size_name(nbytes):
    """bench_ops' shape name of a message size: 8B, 4KiB, 1GiB."""
    for unit in ("GiB", "MiB", "KiB"):
        if nbytes >= UNITS[unit] and nbytes % UNITS[unit] == 0:
            return f"{nbytes // UNITS[unit]}{unit}"
    return f"{nbytes}B"


def bus_factor(op, n):
    return {"all_reduce": 2 * (n - 1) / n, "broadcast": 1.0}.get(op, (n - 1) / n)


def layout(op, nbytes, element_size, n):
    """(input elements, output elements, bytes moved): nccl-tests' size, as bench_ops' layout_of."""
    elements = max(1, nbytes // element_size)
    if op in ("all_reduce", "broadcast"):
        return elements, elements, elements * element_size
    chunk = max(1, elements // n)
    total = chunk * n
    return (chunk if op == "all_gather" else total), (chunk if op == "reduce_scatter" else total), total * element_size


def collective(op, inp, out):
    """One call of `op` (synchronous: on the current stream for NCCL, waited for with gloo)."""
    if op == "all_reduce":
        return dist.all_reduce(inp)
    if op == "broadcast":
        return dist.broadcast(inp, src=0)
    if op == "all_gather":
        return dist.all_gather_into_tensor(out, inp)
    if op == "reduce_scatter":
        return dist.reduce_scatter_tensor(out, inp)
    return dist.all_to_all_single(out, inp)


def time_per_call(op, inp, out, device, iters, warmup):
    """Seconds per call: CUDA events around `iters` back-to-back calls (GPU), else the host clock."""
    for _ in range(warmup):
        collective(op, inp, out)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            collective(op, inp, out)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iters
    begin = time.perf_counter()
    for _ in range(iters):
        collective(op, inp, out)
    return (time.perf_counter() - begin) / iters


def measure(args, device, n):
    results = []
    sizes = []
    nbytes = args.min_bytes
    while nbytes <= args.max_bytes:
        sizes.append(nbytes)
        nbytes *= 8
    for dtype_name in args.dtypes:
        dtype = DTYPES[dtype_name]
        element_size = torch.empty(0, dtype=dtype).element_size()
        for nbytes in sizes:
            for op in args.ops:
                ins, outs, moved = layout(op, nbytes, element_size, n)
                inp = torch.ones(ins, dtype=dtype, device=device)
                out = torch.empty(outs, dtype=dtype, device=device)
                seconds = time_per_call(op, inp, out, device, args.iters, args.warmup)
                algbw = moved / seconds / 1e9
                factor = bus_factor(op, n)
                results.append({"op": op, "dtype": dtype_name, "bytes": nbytes, "size": size_name(nbytes),
                                "time_us": seconds * 1e6, "algbw_GBps": algbw,
                                "busbw_GBps": algbw * factor if factor > 0 else None})
                del inp, out
    return results


def bench_ops_figures(path):
    """{(op backend, dtype, size): {"busbw": GB/s or None, "time_us": median}} from Google Benchmark JSON."""
    data = json.load(open(path))
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    runs = {}
    for b in data.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if b.get("run_type", "iteration") != "iteration" or len(parts) < 4 or parts[0] != "Collective":
            continue
        if b.get("error_occurred") or b.get("skipped"):
            continue
        key = (parts[3], parts[1], parts[2])
        runs.setdefault(key, []).append((b.get("busbw_GB/s"), b["real_time"] * scale[b.get("time_unit", "ns")]))
    world = data.get("context", {}).get("opbench_world", "")
    if world and not world.endswith(f" of {dist.get_world_size()}"):
        print(f"--compare {path}: bench_ops ran as {world}, this world has {dist.get_world_size()} ranks",
              file=sys.stderr)
    figures = {}
    for key, values in runs.items():
        busbw = [v for v, _ in values if v is not None]
        figures[key] = {"busbw": statistics.median(busbw) if busbw else None,
                        "time_us": statistics.median(t for _, t in values)}
    return figures


def compare(results, figures, eager_us):
    """Ratio rows bench_ops / Python, and the graph-mode 8 B all_reduce against Python's eager latency."""
    rows = []
    for r in results:
        theirs = figures.get((r["op"], r["dtype"], r["size"]), {})
        graph = figures.get((r["op"] + "_graph", r["dtype"], r["size"]), {})
        ratio = theirs["busbw"] / r["busbw_GBps"] if theirs.get("busbw") and r["busbw_GBps"] else None
        graph_ratio = graph["busbw"] / r["busbw_GBps"] if graph.get("busbw") and r["busbw_GBps"] else None
        rows.append({"op": r["op"], "dtype": r["dtype"], "size": r["size"], "bench_ops_busbw_GBps": theirs.get("busbw"),
                     "ratio": ratio, "bench_ops_graph_busbw_GBps": graph.get("busbw"), "graph_ratio": graph_ratio})
    latency = []
    for dtype, eager in eager_us.items():
        graph = figures.get(("all_reduce_graph", dtype, "8B"))
        if graph:
            latency.append({"dtype": dtype, "bench_ops_graph_us": graph["time_us"], "python_eager_us": eager,
                            "ratio": graph["time_us"] / eager})
    return rows, latency


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


def table(results, rows, latency, n, backend):
    lines = [f"torch.distributed {backend}, {n} rank(s): time per call (us), algorithm and bus bandwidth (GB/s)"]
    head = f"{'op':<15} {'dtype':<5} {'size':>7} {'time_us':>10} {'algbw':>9} {'busbw':>9}"
    if rows:
        head += f" {'bench_ops':>10} {'ratio':>6} {'graph':>9} {'ratio':>6}"
    lines.append(head)
    for i, r in enumerate(results):
        line = (f"{r['op']:<15} {r['dtype']:<5} {r['size']:>7} {r['time_us']:>10.2f} {r['algbw_GBps']:>9.4g} "
                f"{cell(r['busbw_GBps'], '9.4g'):>9}")
        if rows:
            c = rows[i]
            line += (f" {cell(c['bench_ops_busbw_GBps'], '10.4g'):>10} {cell(c['ratio'], '6.3f'):>6}"
                     f" {cell(c['bench_ops_graph_busbw_GBps'], '9.4g'):>9} {cell(c['graph_ratio'], '6.3f'):>6}")
        lines.append(line)
    for entry in latency:
        lines.append(f"8 B all_reduce {entry['dtype']}: bench_ops graph {entry['bench_ops_graph_us']:.2f} us, "
                     f"Python eager {entry['python_eager_us']:.2f} us, ratio {entry['ratio']:.3f}")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["nccl", "gloo"], default="nccl")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated (default: all five)")
    p.add_argument("--dtypes", default="bf16,fp32", help="comma-separated: bf16, fp32")
    p.add_argument("--min-bytes", type=parse_bytes, default=8)
    p.add_argument("--max-bytes", type=parse_bytes, default=1 << 30)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compare", metavar="BENCH_OPS_JSON", help="bench_ops' --benchmark_out of the same world")
    p.add_argument("--json", metavar="FILE", help="write the figures (rank 0)")
    args = p.parse_args(argv)
    args.ops = args.ops.split(",")
    args.dtypes = args.dtypes.split(",")
    for op in args.ops:
        if op not in OPS:
            p.error(f"--ops: no collective {op} (one of {', '.join(OPS)})")
    for d in args.dtypes:
        if d not in DTYPES:
            p.error(f"--dtypes: {d} is not one of {', '.join(DTYPES)}")
    if args.min_bytes < 1 or args.max_bytes < args.min_bytes:
        p.error("--min-bytes must be >= 1 and <= --max-bytes")
    return args


def main(argv=None):
    args = parse_args(argv)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")   # NVLink multicast off unless the user chose
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.device == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group(args.backend, device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group(args.backend)
    n, rank = dist.get_world_size(), dist.get_rank()
    try:
        results = measure(args, device, n)
        eager_us = {r["dtype"]: r["time_us"] for r in results if r["op"] == "all_reduce" and r["bytes"] == 8}
        rows, latency = compare(results, bench_ops_figures(args.compare), eager_us) if args.compare else ([], [])
        if rank == 0:
            print(table(results, rows, latency, n, args.backend), flush=True)
            if args.json:
                report = {"world_size": n, "backend": args.backend, "device": args.device, "torch": torch.__version__,
                          "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
                          "nccl": ".".join(map(str, torch.cuda.nccl.version())) if args.backend == "nccl" else None,
                          "iters": args.iters, "warmup": args.warmup, "results": results,
                          "eager_all_reduce_8B_us": eager_us, "compare": rows, "graph_latency": latency}
                with open(args.json, "w") as f:
                    json.dump(report, f, indent=1)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
