#!/usr/bin/env python3
"""Cross-check for opbench-trace (tools/opbench_tools/trace_util.py): a literal re-implementation of the GPU busy-time
computation of PyTorch's torch/_functorch/benchmark_utils.py (compute_utilization).

Independent code, same steps and quirks as the seed, no validation at all:
  1. events = trace["traceEvents"]
  2. GPU pids = pid of every event named "process_labels" whose args.labels contains
     "GPU" (`in`: a substring test on a string); "ph" is not checked
  3. GPU events = events with a pid in that list and ph == "X", stably sorted by ts
  4. busy = first event's dur, plus for each later event the part of [ts, ts+dur] past
     the furthest end so far (max(end - max(ts, furthest), 0)), summed in that order
  5. mm/conv events = GPU events whose name contains "gemm", "conv", "cutlass" or
     "wgrad" (case-sensitive); mm busy = step 4 over them
  6. utilizations = busy / (seconds * 1e6), only when --total-s is given

Only addition: gzip input is read (detected by content).  Prints full-precision floats.
Usage: gpu_checks/gpu_util_seed_algorithm.py TRACE [--total-s SECONDS]
"""
import gzip
import json
import sys


def read_events(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)["traceEvents"]


def seed_busy(gpu_events_in_ts_order):
    busy = 0
    furthest = None
    for ev in gpu_events_in_ts_order:
        if furthest is None:            # the seed starts from the first event's dur
            busy = ev["dur"]
            furthest = ev["ts"] + ev["dur"]
            continue
        end = ev["ts"] + ev["dur"]
        begin = max(ev["ts"], furthest)
        busy = busy + max(end - begin, 0)
        furthest = max(furthest, end)
    return busy


def seed_figures(events):
    pids = [ev["pid"] for ev in events
            if "name" in ev and ev["name"] == "process_labels" and "GPU" in ev["args"]["labels"]]
    gpu = [ev for ev in events
           if "pid" in ev and ev["pid"] in pids and "ph" in ev and ev["ph"] == "X"]
    gpu.sort(key=lambda ev: ev["ts"])
    mm = [ev for ev in gpu
          if "name" in ev and any(s in ev["name"] for s in ("gemm", "conv", "cutlass", "wgrad"))]
    return seed_busy(gpu), seed_busy(mm), len(gpu), len(mm)


def main(argv):
    if len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--total-s"):
        sys.stderr.write(__doc__.strip().splitlines()[-1] + "\n")
        return 2
    busy, mm_busy, n, n_mm = seed_figures(read_events(argv[0]))
    print(f"busy_us {float(busy)!r}")
    print(f"mm_busy_us {float(mm_busy)!r}")
    print(f"gpu_events {n}")
    print(f"mm_events {n_mm}")
    if len(argv) == 3:
        total = float(argv[2]) * 1e6
        print(f"gpu_util {busy / total!r}")
        print(f"mm_util {mm_busy / total!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
