#!/usr/bin/env python3
"""Summary of kernel_tune's CSV (kernels/tune/run.sh): per case, the library's own launch (the
configuration `launch(<name>)`: what bench_ops runs) beside the fastest configurations, and every
configuration whose check failed. Exit code 1 when one failed."""
import csv
import sys
from collections import defaultdict


def is_launch(row):
    return row["config"].startswith("launch")


def summarize(rows):
    by_case = defaultdict(list)
    for row in rows:
        by_case[(row["kind"], row["dtype"], row["case"])].append(row)
    lines = [f"{'case':40} {'launch':>20} {'us':>8} {'best':>14} {'us':>8} {'GB/s':>6} {'gain':>6}  next"]
    for (_, dtype, case), case_rows in by_case.items():
        ok = sorted((r for r in case_rows if r["check"] == "ok" and not is_launch(r)), key=lambda r: float(r["us"]))
        mine = next((r for r in case_rows if r["check"] == "ok" and is_launch(r)), None)
        name = mine["config"][len("launch("):-1] if mine else "-"
        mine_us = f"{float(mine['us']):.2f}" if mine else "-"
        if not ok:  # the launch alone (kernels of one configuration)
            lines.append(f"{dtype + ' ' + case:40} {name:>20} {mine_us:>8}  {mine['GBps'] if mine else '-'} GB/s")
            continue
        best = ok[0]
        gain = f"{(float(mine['us']) / float(best['us']) - 1) * 100:+.1f}%" if mine else "-"
        nxt = " ".join(f"{r['config']}:{float(r['us']):.2f}" for r in ok[1:4])
        lines.append(f"{dtype + ' ' + case:40} {name:>20} {mine_us:>8} {best['config']:>14} "
                     f"{float(best['us']):8.2f} {best['GBps']:>6} {gain:>6}  {nxt}")
    failed = [f"FAILED check: {r['kind']} {r['dtype']} {r['case']} {r['config']}" for r in rows if r["check"] != "ok"]
    return lines, failed


def main(path):
    with open(path) as f:
        lines, failed = summarize(list(csv.DictReader(f)))
    print("\n".join(lines + failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
