#!/usr/bin/env python3
"""x3 summary: per case (rounds merged by median), every configuration by time, vs the library's launch."""
import csv, statistics, sys
from collections import defaultdict

for path in sys.argv[1:]:
    times, failed = defaultdict(list), []
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["kind"], r["dtype"].split(".")[0], r["case"])
            if r["check"] != "ok":
                failed.append((key, r["config"]))
                continue
            times[(key, r["config"])].append(float(r["us"]))
    cases = defaultdict(dict)
    for (key, cfg), v in times.items():
        cases[key][cfg] = statistics.median(v)
    print(f"== {path}")
    for key, cfgs in cases.items():
        base = cfgs.get("launch")
        print(f"-- {key[1]} {key[2]}  launch {base}")
        for cfg, us in sorted(cfgs.items(), key=lambda kv: kv[1])[:12]:
            gain = f"{(base / us - 1) * 100:+6.1f}%" if base else ""
            print(f"   {cfg:22} {us:9.2f} us {gain}")
    for key, cfg in failed:
        print(f"FAILED {key} {cfg}")
