"""Derives a targets file from measured experiment rows, by a stated rule.

  opbench-make-targets ROWS.csv --device NAME [--factor 0.95] [--source TEXT] > targets/x.json

Rule: target = factor x the measured actual, rounded down to 3 significant figures, so that a
slowdown of more than (1 - factor) misses the target. The rule and the source go into the file."""
import argparse
import csv
import json
import math
import sys


def round_down_3(value):
    digits = 3 - int(math.floor(math.log10(abs(value)))) - 1
    scale = 10.0 ** digits
    return math.floor(value * scale) / scale


def main():
    parser = argparse.ArgumentParser(prog="opbench-make-targets", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows")
    parser.add_argument("--device", required=True, help="exact device name, e.g. 'NVIDIA H200'")
    parser.add_argument("--factor", type=float, default=0.95)
    parser.add_argument("--source", default="", help="where the rows came from (GPU, date, command)")
    args = parser.parse_args()
    targets = {}
    with open(args.rows) as f:
        for row in csv.DictReader(f):
            if row["arch"] != args.device or not row["actual"] or float(row["actual"]) <= 0:
                continue   # a target must be positive (a collective's bus bandwidth is 0 with one rank)
            key = (row["name"], row["metric"], row["dtype"], row.get("backend") or "aten")
            targets[key] = round_down_3(args.factor * float(row["actual"]))
    if not targets:
        sys.exit(f"opbench-make-targets: {args.rows}: no rows with actual values for {args.device}")
    doc = {
        "devices": [args.device],
        "rule": f"target = {args.factor} x the measured actual, rounded down to 3 significant figures; "
                f"measured: {args.source or args.rows}",
        "targets": [{"experiment": e, "metric": m, "dtype": d, "backend": b, "target": v}
                    for (e, m, d, b), v in sorted(targets.items())],
    }
    json.dump(doc, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
