"""Per case: the median over rounds of each configuration, against the median of `launch` (and launch.first)."""
import csv, statistics, sys
from collections import defaultdict
t = defaultdict(list); bad = set()
for row in csv.DictReader(open(sys.argv[1])):
    if row["kind"] == "kind": continue
    key = (row["dtype"], row["case"])
    if row["check"] != "ok":
        bad.add((key, row["config"])); continue
    t[key, row["config"]].append(float(row["us"]))
cases = sorted({k for k, _ in t})
for case in cases:
    base_runs = t.get((case, "launch"), []) + t.get((case, "launch.first"), []) or next(v for (k, c), v in t.items() if k == case)
    base = statistics.median(base_runs)
    print(f"-- {case[0]} {case[1]}  launch {base:.2f} us")
    rows = sorted(((statistics.median(v), c, v) for (k, c), v in t.items() if k == case))
    for med, c, v in rows:
        print(f"   {c:18s} {med:8.2f} us  {100 * (base / med - 1):+6.2f}%   [{' '.join(f'{x:.2f}' for x in v)}]")
for b in sorted(bad): print("FAILED", b)
