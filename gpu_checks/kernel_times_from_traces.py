#!/usr/bin/env python3
"""Per-kernel GPU time of bench_ops --opbench_trace traces: for each *.trace.json in a folder (read with
opbench-trace), the kernels grouped by name (launches, mean microseconds, share of the summed kernel
time), largest first.
With programmatic launches a kernel's span includes its wait for the kernel before: read the
graph_serial backend's trace for kernel times.
    gpu_checks/kernel_times_from_traces.py TRACE_DIR [--top N]"""
import argparse
import collections
import glob
import os
import sys

from opbench_tools import trace_events  # loading, gzip and the event list, with one-line errors


def kernel_table(path, top):
    events = [e for e in trace_events.trace_events(trace_events.load_trace(path), path)
              if isinstance(e, dict) and e.get("cat") == "kernel"]
    if not events:
        return f"{os.path.basename(path)}: no kernel events"
    spans = collections.defaultdict(list)
    for e in events:
        spans[e["name"]].append(e["dur"])
    total = sum(e["dur"] for e in events)
    lines = [f"{os.path.basename(path)}: {len(events)} kernels, {total:.0f} us"]
    for name, durs in sorted(spans.items(), key=lambda kv: -sum(kv[1]))[:top]:
        lines.append(f"  {len(durs):6d} x {sum(durs) / len(durs):8.2f} us = {100 * sum(durs) / total:5.1f}%  {name[:100]}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace_dir")
    ap.add_argument("--top", type=int, default=14)
    args = ap.parse_args()
    paths = sorted(glob.glob(os.path.join(args.trace_dir, "*.trace.json")))
    if not paths:
        sys.exit(f"kernel_times_from_traces: no *.trace.json in {args.trace_dir}")
    try:
        print("\n".join(kernel_table(p, args.top) for p in paths))
    except trace_events.TraceError as e:
        sys.exit(f"kernel_times_from_traces: {e}")


if __name__ == "__main__":
    main()
