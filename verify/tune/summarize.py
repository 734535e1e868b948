#!/usr/bin/env python3
"""Summary of verify/tune/kernel_tune's CSV: per case, the fastest configurations beside the one the
launch code picks (named by `picked`; the argument --picked overrides it as case=config pairs)."""
import csv
import sys
from collections import defaultdict


def picked(kind, dtype, case):
    """The configuration the launch code picks for a case, in the tuner's names."""
    if kind == "norm":
        vectors = int(case.split("x")[-1]) // 8
        return "v4strue" if vectors <= 512 else ("v4sfalse" if vectors <= 4096 else "v8sfalse")
    cols = int(case.split("/")[-1].split("x")[-1])
    if dtype == "bf16":
        return "g4r2s2" if cols * 2 <= 8192 else "g8r1s4"
    return "g2r2s2" if cols < 12288 else "g8r2s2"

def main(path):
    by_case = defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            by_case[(row["kind"], row["dtype"], row["case"])].append(row)
    failed = [(k, r["config"]) for k, rows in by_case.items() for r in rows if r["check"] != "ok"]
    print(f"{'case':40} {'picked':>10} {'us':>8} {'best':>10} {'us':>8} {'GB/s':>6} {'gain':>6}  next")
    for key, rows in by_case.items():
        ok = sorted((r for r in rows if r["check"] == "ok"), key=lambda r: float(r["us"]))
        if not ok:
            continue
        pick = picked(*key)
        mine = next((r for r in ok if r["config"] == pick), None)
        best = ok[0]
        gain = f"{(float(mine['us']) / float(best['us']) - 1) * 100:+.1f}%" if mine else "-"
        nxt = " ".join(f"{r['config']}:{float(r['us']):.2f}" for r in ok[1:4])
        print(f"{key[1] + ' ' + key[2]:40} {pick:>10} {mine['us'] if mine else '-':>8} {best['config']:>10} "
              f"{float(best['us']):8.2f} {best['GBps']:>6} {gain:>6}  {nxt}")
    for key, config in failed:
        print(f"FAILED check: {key} {config}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
