"""Derives a targets file from measured experiment rows, by a stated rule.

  opbench-make-targets ROWS.csv --device NAME [--factor 0.95] [--source TEXT] > targets/x.json

Rule: target = factor x the measured actual, rounded down to 3 significant figures, so that a
slowdown of more than (1 - factor) misses the target. The rule and the source go into the file.
Exit 0, or 2 on unusable input (no rows for the device, a row whose actual is not a number)."""
import argparse
import csv
import io
import json
import math
import sys

from opbench_tools import cli
from opbench_tools.json_input import InputError, read_text

COLUMNS = ("name", "metric", "dtype", "arch", "actual")
TARGET_RANGE = (1e-30, 1e30)   # targets outside it are refused: no metric is that small or large


def round_down_3(value):
    digits = 3 - int(math.floor(math.log10(abs(value)))) - 1
    scale = 10.0 ** digits
    return math.floor(value * scale) / scale


def read_targets(path, device, factor):
    """{(experiment, metric, dtype, backend): target} of the rows measured on `device`."""
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: not an experiments CSV: missing column(s) {', '.join(missing)}")
        targets = {}
        for row in reader:
            actual = row["actual"] if isinstance(row["actual"], str) else ""
            if row["arch"] != device or not actual.strip():
                continue
            value = _number(actual)
            if value is None:
                raise InputError(f"{path}:{reader.line_num}: actual is not a finite number: {actual[:40]!r}")
            if value <= 0:
                continue   # a target must be positive (a collective's bus bandwidth is 0 with one rank)
            if not TARGET_RANGE[0] <= factor * value <= TARGET_RANGE[1]:
                raise InputError(f"{path}:{reader.line_num}: actual {actual[:40]} gives a target outside "
                                 f"{TARGET_RANGE[0]:g} to {TARGET_RANGE[1]:g}")
            key = (row["name"], row["metric"], row["dtype"], row.get("backend") or "aten")
            targets[key] = round_down_3(factor * value)
        return targets
    except csv.Error as e:
        raise InputError(f"{path}:{reader.line_num}: cannot read: {e}") from None


def _number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def main(argv=None):
    return cli.run("opbench-make-targets", _main, argv)


def _main(argv):
    parser = cli.Parser(prog="opbench-make-targets", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows")
    parser.add_argument("--device", required=True, help="exact device name, e.g. 'NVIDIA H200'")
    parser.add_argument("--factor", type=float, default=0.95, help="0 < factor <= 10 (default 0.95)")
    parser.add_argument("--source", default="", help="where the rows came from (GPU, date, command)")
    args = parser.parse_args(argv)
    if not 0 < args.factor <= 10:
        parser.error(f"--factor {args.factor}: expected a number in (0, 10]")
    targets = read_targets(args.rows, args.device, args.factor)
    if not targets:
        raise InputError(f"{args.rows}: no rows with actual values for {args.device}")
    doc = {
        "devices": [args.device],
        "rule": f"target = {args.factor} x the measured actual, rounded down to 3 significant figures; "
                f"measured: {args.source or args.rows}",
        "targets": [{"experiment": e, "metric": m, "dtype": d, "backend": b, "target": v}
                    for (e, m, d, b), v in sorted(targets.items())],
    }
    json.dump(doc, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
