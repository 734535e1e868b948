#!/usr/bin/env python3
"""Kernel-only timing against Nsight Compute: one table of the same cases under bench_ops' events,
graph and cupti timers and ncu's gpu__time_duration (median over the profiled launches).

  gpu_checks/timers_vs_ncu.py DIR [--json OUT]

DIR holds timers_<events|graph|cupti>.json (bench_ops --opbench_timer=...) and ncu_<case with / as _>.csv
(`ncu --csv --metrics gpu__time_duration.sum`, one file per case), as gpu_session.sh's `timers` step
writes them. Prints a markdown table: times in us, and each timer's difference from ncu in percent."""
import argparse
import json
import pathlib

from ncu_vs_bench_ops import ncu_median_us
from opbench_tools import benchmark_json

TIMERS = ("cupti", "events", "graph")


def counters(path, case, names):
    for b in benchmark_json.read_json(str(path))["benchmarks"]:
        if b["name"] == case:
            return {n: b.get(n) for n in names}
    return {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    d = pathlib.Path(args.dir)
    times = {t: benchmark_json.medians_us(str(d / f"timers_{t}.json")) for t in TIMERS}
    rows = []
    for csv in sorted(d.glob("ncu_*.csv")):
        case = csv.stem[len("ncu_"):].replace("_", "/")
        ncu_us, launches = ncu_median_us(str(csv))
        row = {"case": case, "ncu_us": ncu_us, "ncu_launches": launches}
        for t in TIMERS:
            row[f"{t}_us"] = times[t].get(case)
        row.update(counters(d / "timers_cupti.json", case, ("sm_clock_mhz", "nvml_sm_clock_mhz", "power_w",
                                                           "throttled_samples", "samples")))
        rows.append(row)
    rows.sort(key=lambda r: r["ncu_us"])
    print("| case | ncu us | cupti us | cupti vs ncu | events us | events vs ncu | graph us | graph vs ncu | "
          "SM clock MHz (timestamps / NVML) | power W | throttled/samples |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def diff(us, ref):
        return "-" if us is None else f"{100 * (us - ref) / ref:+.2f}%"

    def num(x, fmt):
        return "-" if x is None else format(x, fmt)
    for r in rows:
        print(f"| {r['case']} | {r['ncu_us']:.2f} | {num(r['cupti_us'], '.2f')} | {diff(r['cupti_us'], r['ncu_us'])} | "
              f"{num(r['events_us'], '.2f')} | {diff(r['events_us'], r['ncu_us'])} | {num(r['graph_us'], '.2f')} | "
              f"{diff(r['graph_us'], r['ncu_us'])} | {num(r.get('sm_clock_mhz'), '.0f')} / "
              f"{num(r.get('nvml_sm_clock_mhz'), '.0f')} | {num(r.get('power_w'), '.0f')} | "
              f"{num(r.get('throttled_samples'), '.0f')}/{num(r.get('samples'), '.0f')} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
