"""opbench-changepoints: Finds the steps in a series of runs (one a night, one a commit), per case, with
E-divisive means and a permutation test (edivisive.py), and says where each step starts, how large it is
and how sure the test is.

The inputs, in series order (files as given; a folder's *.json and *.jsonl files in name order, so name
nightly files by date), are bench_ops outputs of either kind:
  Google Benchmark JSON (--benchmark_out)   one point a file; a case's value is the median of its
                                           repetitions of --metric (default real_time)
  dashboard records (--output's FILE.json)  one point per run (run_id) in the file; a series per row,
                                           name/dtype/backend/metric, its value the row's actual
A point is labelled with its commit (context opbench_sha, or the records' dependencies.opbench.sha) when
that is known, else with its file name. A case missing or failed at a point is left out of that point.
Steps are reported in % of the value before them, + = worse (slower, or lower throughput).
Exit status: 0 when the series were analysed (with --recent K: 1 when a step worse than --threshold starts
in the last K points), 2 on unusable input. Full description: docs/changepoints.md
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import zlib
from dataclasses import dataclass, field

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError, higher_is_better, load_run
from opbench_tools.compare import fmt_value
from opbench_tools.gate import lower_is_better_row
from opbench_tools.json_input import parse_json_document_or_lines
from opbench_tools.stats import median, side_of

DEFAULT_ALPHA = 0.01       # a step must be this significant (permutation p-value)
DEFAULT_PERMUTATIONS = 199
DEFAULT_MIN_SEGMENT = 3    # points on each side of a step, at least
MAX_POINTS = 1000          # points a series may have: the test is O(n^2) in memory and time per pass
MAX_FILES = 10_000         # files one call may read
UNKNOWN_SHAS = {"", "unknown", "none"}


@dataclass
class Point:
    label: str                                   # commit, else the file name (and run)
    source: str                                  # the file (and run_id) it came from
    values: dict = field(default_factory=dict)   # series key -> value


@dataclass
class Series:
    key: str
    lower_is_better: bool
    metric: str                                  # how its values print: a time metric, else plain numbers
    at: list = field(default_factory=list)       # point index of each value
    values: list = field(default_factory=list)


# ---------------------------------------------------------------- reading
def input_files(paths: list) -> list:
    """The files to read, in series order: each path as given, a folder's *.json/*.jsonl by name."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(f for f in os.listdir(path) if f.endswith((".json", ".jsonl")))
            if not found:
                raise InputError(f"{path}: a folder without *.json or *.jsonl files")
            files += [os.path.join(path, f) for f in found]
        else:
            files.append(path)
    if len(files) > MAX_FILES:
        raise InputError(f"{len(files)} files: at most {MAX_FILES} are read in one call")
    return files


def read_points(path: str, metric: str) -> tuple:
    """(points, {series key: lower is better}) of one file (module docstring)."""
    kind, content = parse_json_document_or_lines(path)
    if kind == "document" and isinstance(content, dict) and "benchmarks" in content:
        return benchmark_point(path, metric)
    if kind == "document":
        content = [(1, content)]
    return dashboard_points(path, content)


def benchmark_point(path: str, metric: str) -> tuple:
    run = load_run(path)
    sha = str(run.context.get("opbench_sha", ""))
    point = Point(_label(sha, path), path)
    directions = {}
    for name, case in run.cases.items():
        side = None if case.error or case.broken.get(metric) else side_of(case, metric)
        if side is not None and math.isfinite(side.median) and side.median > 0:
            point.values[name] = side.median
            directions[name] = (not higher_is_better(metric), metric)
    return [point], directions


def dashboard_points(path: str, records: list) -> tuple:
    """One point per run_id (in order of first appearance); rows of one key in one run (a sharded run's
    GPUs) give their median."""
    runs: dict = {}
    directions = {}
    for line, record in records:
        key, metric, run_id, sha, value = _record(path, line, record)
        if value is None:
            continue
        point_values = runs.setdefault(run_id, (sha, {}))[1]
        point_values.setdefault(key, []).append(value)
        directions[key] = (lower_is_better_row(metric), metric)
    if not runs:
        raise InputError(f"{path}: no dashboard record with a value (and no Google Benchmark 'benchmarks')")
    points = []
    for run_id, (sha, values) in runs.items():
        source = path if len(runs) == 1 else f"{path}#{run_id}"
        label = _label(sha, source if len(runs) > 1 else path)
        points.append(Point(label, source, {k: median(v) for k, v in values.items()}))
    return points, directions


def _record(path: str, line: int, record) -> tuple:
    """(series key, metric, run id, sha, value or None) of one dashboard record; InputError naming file:line."""
    def field_of(*keys):
        node = record
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        return node
    name, metric = field_of("model", "name"), field_of("metric", "name")
    if not isinstance(name, str) or not isinstance(metric, str):
        raise InputError(f"{path}:{line}: not a dashboard record (needs model.name and metric.name strings)")
    key = "/".join(str(field_of(*k) or "") for k in (("benchmark", "dtype"), ("model", "backend")))
    values = field_of("metric", "benchmark_values")
    value = values[0] if isinstance(values, list) and values else None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    run_id = str(field_of("benchmark", "extra_info", "run_id") or "")
    sha = str(field_of("dependencies", "opbench", "sha") or "")
    return f"{name}/{key}/{metric}", metric, run_id, sha, (float(value) if ok else None)


def _label(sha: str, source: str) -> str:
    return sha if sha.strip().lower() not in UNKNOWN_SHAS else os.path.basename(source)


def build_series(files: list, metric: str, pattern, min_segment: int) -> tuple:
    """(points, [Series]) of the files in order; series keys filtered by `pattern` (a regex or None)."""
    points, directions = [], {}
    for path in files:
        new_points, new_directions = read_points(path, metric)
        points += new_points
        directions.update(new_directions)
    if len(points) < 2 * min_segment:
        raise InputError(f"{len(points)} point(s): a step needs at least {min_segment} on each side (--min-segment)")
    if len(points) > MAX_POINTS:
        raise InputError(f"{len(points)} points: at most {MAX_POINTS} (the test is quadratic in the length)")
    series = {}
    for i, point in enumerate(points):
        for key, value in point.values.items():
            if pattern is None or pattern.search(key):
                s = series.setdefault(key, Series(key, *directions[key]))
                s.at.append(i)
                s.values.append(value)
    if not series:
        raise InputError("no series: " + ("--filter matched no case" if pattern else "the files hold no value"))
    return points, list(series.values())


# ---------------------------------------------------------------- analysis
def analyse(series: list, points: list, args) -> list:
    """One dict a series: its length and its steps (edivisive.change_points)."""
    from opbench_tools.edivisive import change_points, step_sizes
    out = []
    for s in series:
        seed = zlib.crc32(s.key.encode()) ^ args.seed   # per series: the answer does not depend on the others
        found = change_points(s.values, args.alpha, args.permutations, args.min_segment, seed)
        steps = []
        for c, (before, after) in zip(found, step_sizes(s.values, found)):
            change = (after / before - 1) if s.lower_is_better else (before / after - 1)
            if abs(100 * change) < args.min_change:
                continue
            point = points[s.at[c.index]]
            steps.append({"point": s.at[c.index], "label": point.label, "source": point.source,
                          "before": before, "after": after, "change_pct": 100 * change,
                          "p_value": c.p_value, "confidence_pct": 100 * (1 - c.p_value)})
        out.append({"series": s.key, "metric": s.metric, "points": len(s.values), "lower_is_better": s.lower_is_better,
                    "steps": steps, "too_short": len(s.values) < 2 * args.min_segment})
    return out


def recent_regressions(result: list, points: int, args) -> list:
    """Steps worse than --threshold that start in the last --recent points."""
    if not args.recent:
        return []
    return [(r, s) for r in result for s in r["steps"]
            if s["point"] >= points - args.recent and s["change_pct"] > args.threshold]


# ---------------------------------------------------------------- report
def step_text(s: dict, metric: str) -> str:
    word = "worse" if s["change_pct"] > 0 else "better"
    return (f"from point {s['point']} ({s['label']}): {fmt_value(s['before'], metric)} -> "
            f"{fmt_value(s['after'], metric)}, "
            f"{abs(s['change_pct']):.1f}% {word}; p={s['p_value']:.3g} (confidence {s['confidence_pct']:.1f}%)")


def report_lines(result: list, points: list, args) -> list:
    lines = [f"changepoints: {len(points)} points ({points[0].label} .. {points[-1].label}), {len(result)} series; "
             f"E-divisive means, alpha {args.alpha:g}, {args.permutations} permutations, "
             f"min segment {args.min_segment}"]
    for r in result:
        for s in r["steps"]:
            lines.append(f"STEP {r['series']}: {step_text(s, r['metric'])}")
    short = [r["series"] for r in result if r["too_short"]]
    if short:
        lines.append(f"note: {len(short)} series shorter than 2 x --min-segment points, not analysed: "
                     + ", ".join(short[:5]) + (" ..." if len(short) > 5 else ""))
    steady = sum(1 for r in result if not r["steps"] and not r["too_short"])
    lines.append(f"changepoints: {sum(len(r['steps']) for r in result)} step(s) in "
                 f"{sum(1 for r in result if r['steps'])} series; {steady} series without a step")
    for r, s in recent_regressions(result, len(points), args):
        lines.append(f"RECENT REGRESSION {r['series']}: {step_text(s, r['metric'])}")
    return lines


def render_markdown(result: list, points: list) -> str:
    md = [f"### opbench change points: {len(points)} points, {len(result)} series", "",
          "| series | from point | commit | before | after | change | p |", "|---|---|---|---|---|---|---|"]
    for r in result:
        for s in r["steps"]:
            md.append(f"| `{r['series']}` | {s['point']} | `{s['label']}` | {fmt_value(s['before'], r['metric'])} | "
                      f"{fmt_value(s['after'], r['metric'])} | "
                      f"{s['change_pct']:+.1f}% | {s['p_value']:.3g} |")
    steady = sum(1 for r in result if not r["steps"])
    return "\n".join(md + ["", f"{steady} series without a step; + = worse."]) + "\n"


def parse_args(argv: list) -> argparse.Namespace:
    p = cli.Parser(prog="opbench-changepoints", description=__doc__.split(": ", 1)[1],
                   formatter_class=argparse.RawDescriptionHelpFormatter, epilog="""examples:
  opbench-changepoints nightly/                            every *.json there, in name order
  opbench-changepoints 2026-11-0*.json --filter '^LayerNorm/' --json steps.json --markdown steps.md
  opbench-changepoints nightly/ --recent 1 --threshold 2   exit 1 if last night began a step > 2% worse""")
    p.add_argument("inputs", nargs="+", metavar="FILE|FOLDER", help="runs in series order")
    p.add_argument("--metric", default="real_time", help="Google Benchmark JSON: the metric (default real_time)")
    p.add_argument("--filter", metavar="REGEX", help="only series whose key matches")
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="significance of a step (default %(default)g)")
    p.add_argument("--permutations", type=int, default=DEFAULT_PERMUTATIONS,
                   help="shuffles per test (default %(default)d)")
    p.add_argument("--min-segment", type=int, default=DEFAULT_MIN_SEGMENT,
                   help="fewest points on each side of a step (default %(default)d)")
    p.add_argument("--min-change", type=float, default=0.0, metavar="PCT", help="hide steps smaller than PCT%%")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffles (default 0)")
    p.add_argument("--recent", type=int, default=0, metavar="K", help="exit 1 on a step worse than --threshold "
                   "that starts in the last K points")
    p.add_argument("--threshold", type=float, default=0.0, metavar="PCT", help="with --recent (default 0)")
    p.add_argument("--json", metavar="FILE", help="write every step as JSON ('-': stdout)")
    p.add_argument("--markdown", metavar="FILE", help="write the steps as markdown ('-': stdout)")
    args = p.parse_args(argv)
    if not (0 < args.alpha < 1 and 1 / (args.permutations + 1) <= args.alpha and args.permutations <= 100_000
            and 2 <= args.min_segment <= 100 and 0 <= args.min_change < math.inf and 0 <= args.recent <= MAX_POINTS
            and 0 <= args.threshold < math.inf and 0 <= args.seed < 2**32):
        p.error("need 0 < alpha < 1, 1/(permutations + 1) <= alpha, permutations <= 100000, 2 <= min-segment "
                "<= 100, min-change and threshold >= 0, 0 <= recent <= 1000, 0 <= seed < 2^32")
    return args


def main(argv: list | None = None) -> int:
    return cli.run("opbench-changepoints", _main, argv)


def _main(argv: list | None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        pattern = _regex(args.filter)
        files = input_files(args.inputs)
        cli.check_outputs({f"input {i}": f for i, f in enumerate(files)}, {"--json": args.json,
                                                                          "--markdown": args.markdown})
        points, series = build_series(files, args.metric, pattern, args.min_segment)
    except InputError as e:
        print(f"opbench-changepoints: error: {e}", file=sys.stderr)
        return cli.UNUSABLE
    result = analyse(series, points, args)
    if "-" not in (args.json, args.markdown):
        print("\n".join(report_lines(result, points, args)))
    outputs = {args.json: lambda: json.dumps({"points": [{"label": p.label, "source": p.source} for p in points],
                                              "series": result}, indent=1) + "\n",
               args.markdown: lambda: render_markdown(result, points)}
    for path, text in outputs.items():
        if path == "-":
            sys.stdout.write(text())
        elif path:
            cli.write_atomically(path, text())
    return 1 if recent_regressions(result, len(points), args) else 0


def _regex(pattern: str | None):
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InputError(f"--filter {pattern!r}: invalid regex: {e}") from None


if __name__ == "__main__":
    sys.exit(main())
