"""opbench-compare: Compares two bench_ops (or any Google Benchmark) JSON outputs, case by case.

Per case: the median of the repetitions on each side, the change ("slower"/"faster", the same figure for
times and throughputs), a two-sided Mann-Whitney U test over the repetitions, the derived counters
(GB/s, TFLOP/s), and a verdict (SLOWER, FASTER, NOISY, UNSURE, SAME, FAILED); the geomean over cases.
Outputs: a console table (coloured on a terminal), --markdown, --json, --plot. With --binaries it runs
two benchmark binaries itself, interleaved (old, new, old, new, ...), one process per repetition; with
--max-repetitions it adds processes, for the cases still unresolved only, until each resolves the threshold
(sequential.py). --paired compares the i-th repetitions of the two sides in pairs.
Exit status: 0 when the comparison was made (compare never judges; opbench-gate does), 2 on unusable input.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError, higher_is_better, load_run
from opbench_tools.benchmark_processes import Group
from opbench_tools.resolve import unresolved
from opbench_tools.sequential import run_until_resolved
from opbench_tools.stats import (DEFAULT_ALPHA, DEFAULT_THRESHOLD, NOISE_Z, CaseResult, Comparison,
                                 as_dict, compare_runs)

COLOURS = {"SLOWER": "31", "FASTER": "32", "NOISY": "33", "UNSURE": "33", "FAILED": "35", "N/A": "35"}
SEVERITY = ["FAILED", "SLOWER", "UNSURE", "NOISY", "N/A", "FASTER", "SAME"]
SHOWN_COUNTERS = ("GB/s", "TFLOP/s")
CONSOLE_COLUMNS = 100    # the console table's width (a longer case name gets a line of its own)
PLOT_MAX_CASES = 400      # one bar a case: more is no longer readable (nor drawable: the figure's height)


# ---------------------------------------------------------------- formatting
def fmt_value(x: float | None, metric: str) -> str:
    if x is None:
        return "-"
    if metric not in ("real_time", "cpu_time"):
        return f"{x:.4g}"
    for scale, unit in ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms")):
        text = f"{x / scale:.4g}"
        if abs(float(text)) < 1000:   # 999.96 us rounds to 1000: shown as 1 ms
            return f"{text} {unit}"
    return f"{x:.4g} s"


def fmt_change(change: float | None) -> str:
    if change is None:
        return "-"
    if abs(change) < 5e-4:
        return "0.0%"
    return f"{100 * abs(change):.1f}% " + ("slower" if change > 0 else "faster")


def fmt_p(case: CaseResult) -> str:
    if case.test == "deterministic":
        return "exact"
    if case.p_value is None:
        return "-"
    return f"{case.p_value:.1e}" if case.p_value < 1e-3 else f"{case.p_value:.3f}"


def fmt_noise(case: CaseResult) -> str:
    return "-" if case.stderr is None else f"±{100 * 2 * case.stderr:.1f}%"


def fmt_counter(case: CaseResult, counter: str, both: bool = True) -> str:
    """The counter's old -> new (change); with both=False its new value only (the console table)."""
    c = case.counters.get(counter)
    if not c or not (c["old"] or c["new"]):
        return "-"
    if not both:
        return f"{c['new']:.4g}"
    change = "" if c["change"] is None else f" ({100 * c['change']:+.1f}%)"
    return f"{c['old']:.4g} -> {c['new']:.4g}{change}"


def fmt_signed_change(change: float | None) -> str:
    """The change for the console table: +6.0% = 6% slower (worse), -4.0% = 4% faster."""
    if change is None:
        return "-"
    return "0.0%" if abs(change) < 5e-4 else f"{100 * change:+.1f}%"


def shown_counters(comp: Comparison) -> list:
    """Derived counters worth a column: present and non-zero somewhere."""
    return [k for k in SHOWN_COUNTERS
            if any(k in c.counters and (c.counters[k]["old"] or c.counters[k]["new"]) for c in comp.cases)]


def table_rows(comp: Comparison, compact: bool = False) -> tuple:
    """(header, rows); compact (the console): the change signed (+ = slower), the counters' new values."""
    counters = shown_counters(comp)
    header = ["case", "old", "new", "change", "p", "±2se"] + counters + ["verdict"]
    change = fmt_signed_change if compact else fmt_change
    rows = []
    for c in comp.cases:
        rows.append([c.name, fmt_value(c.old.median if c.old else None, comp.metric),
                     fmt_value(c.new.median if c.new else None, comp.metric), change(c.change),
                     fmt_p(c), fmt_noise(c)] + [fmt_counter(c, k, not compact) for k in counters] + [c.verdict])
    return header, rows


def summary_line(comp: Comparison) -> str:
    counts = comp.counts()
    parts = [f"{counts[v]} {v.lower()}" for v in SEVERITY if counts.get(v)]
    geo = fmt_change(comp.geomean_change) if comp.geomean_change is not None else "n/a"
    return f"geomean {geo} over {len(comp.cases)} cases: " + ", ".join(parts)


def heading(comp: Comparison, wrap: bool = False):
    """What was compared: one line (markdown), or a list of lines of at most CONSOLE_COLUMNS (wrap)."""
    better = "higher" if higher_is_better(comp.metric) else "lower"
    thresholds = sorted({c.threshold for c in comp.cases})
    thr = "/".join(f"{100 * t:g}%" for t in thresholds)
    parts = [f"{comp.metric} ({better} is better),", f"old {comp.old_path} ({comp.old_reps} reps)",
             f"vs new {comp.new_path} ({comp.new_reps} reps);", f"alpha {comp.alpha:g}, threshold {thr}"]
    if not wrap:
        return " ".join(parts)
    lines = [parts[0]]
    for part in parts[1:] + ["(change: + is slower; ±2se: two standard errors of the change; counters: new values)"]:
        joined = f"{lines[-1]} {part}"
        lines[-1:] = [joined] if len(joined) <= CONSOLE_COLUMNS else [lines[-1], part]
    return lines


# ---------------------------------------------------------------- outputs
def render_console(comp: Comparison, colour: bool) -> str:
    """The table within CONSOLE_COLUMNS: a case name too long for its column gets a line of its own."""
    header, rows = table_rows(comp, compact=True)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    numbers = sum(widths[1:]) + 2 * (len(widths) - 1)
    widths[0] = max(len(header[0]), min(widths[0], CONSOLE_COLUMNS - numbers))

    def line(cells: list, verdict: str | None = None) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths)):
            text = cell.ljust(w) if i == 0 else cell.rjust(w)
            if colour and verdict in COLOURS and i in (3, len(cells) - 1):
                text = f"\033[{COLOURS[verdict]}m{text}\033[0m"
            out.append(text)
        return "  ".join(out).rstrip()

    lines = heading(comp, wrap=True) + [line(header), "  ".join("-" * w for w in widths)]
    for r in rows:
        if len(r[0]) > widths[0]:
            lines.append(r[0])
            r = [""] + r[1:]
        lines.append(line(r, r[-1]))
    lines.append(summary_line(comp))
    lines += [f"note: {c.name}: {c.note}" for c in comp.cases if c.note]
    lines += [f"THROTTLED: {c.name}: {throttle_text(c)}" for c in comp.cases if c.throttled]
    lines += [f"warning: {w}" for w in comp.warnings]
    return "\n".join(lines) + "\n"


def throttle_text(c: CaseResult) -> str:
    """Which side's repetitions lost samples to low GPU clocks (bench_ops discarded them)."""
    return ", ".join(f"{n} {side} repetition(s)" for side, n in c.throttled.items()) + \
        " discarded over 5% of their samples as throttled: the GPU ran below its clock threshold"


def md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(comp: Comparison, title: str = "opbench compare") -> str:
    header, rows = table_rows(comp)
    order = {v: i for i, v in enumerate(SEVERITY)}
    rows.sort(key=lambda r: order.get(r[-1], 0))
    icons = {"SLOWER": "🔴 ", "FASTER": "🟢 ", "NOISY": "🟡 ", "UNSURE": "🟡 ", "FAILED": "❌ "}
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    changed = [r for r in rows if r[-1] != "SAME"]
    same = [r for r in rows if r[-1] == "SAME"]

    def md_row(r: list) -> str:
        return "| " + " | ".join([f"`{md_escape(r[0])}`"] + r[1:-1] + [icons.get(r[-1], "") + r[-1]]) + " |"

    out = [f"### {title}: `{comp.metric}`", "", f"**{summary_line(comp)}**", "",
           f"<sub>{md_escape(heading(comp))}. A verdict needs |change| > threshold, > {NOISE_Z:g} standard "
           "errors of the change, and p < alpha (two-sided Mann-Whitney U).</sub>", ""]
    if changed:
        out += table + [md_row(r) for r in changed] + [""]
    if same:
        out += [f"<details><summary>{len(same)} unchanged case(s)</summary>", ""]
        out += table + [md_row(r) for r in same] + ["", "</details>", ""]
    out += [f"- note: `{md_escape(c.name)}`: {md_escape(c.note)}" for c in comp.cases if c.note]
    out += [f"- 🌡️ THROTTLED `{md_escape(c.name)}`: {throttle_text(c)}" for c in comp.cases if c.throttled]
    out += [f"- ⚠️ {md_escape(w)}" for w in comp.warnings]
    return "\n".join(out).rstrip() + "\n"


def write_plot(comp: Comparison, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib, which this python lacks") from None
    cases = comp.cases   # failed / N/A cases get no bar, only their label
    colours = {"SLOWER": "#d62728", "FASTER": "#2ca02c", "NOISY": "#ff9f1c", "UNSURE": "#ff9f1c"}
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.32 * max(len(cases), 1)))
    ys = list(range(len(cases)))[::-1]
    xs = [100 * c.change if c.change is not None else 0 for c in cases]
    errs = [200 * c.stderr if c.stderr else 0 for c in cases]
    ax.barh(ys, xs, xerr=errs, color=[colours.get(c.verdict, "#9e9e9e") for c in cases],
            error_kw={"ecolor": "#333333", "capsize": 3, "lw": 1})
    for t in sorted({c.threshold for c in comp.cases}):
        for sign in (-1, 1):
            ax.axvline(sign * 100 * t, color="#555555", ls="--", lw=0.8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(ys)
    ax.set_ylim(-0.8, len(cases) - 0.2)
    ax.set_yticklabels([f"{c.name}  [{c.verdict}]" for c in cases], fontsize=8)
    ax.set_xlabel(f"{comp.metric}: change new vs old, % (+ = slower); whiskers ±2 standard errors; "
                  "dashed: threshold", fontsize=8)
    ax.set_title(summary_line(comp), fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    cli.save_figure(fig, path, dpi=130)
    plt.close(fig)


def write_text(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    cli.write_atomically(path, text)


# ---------------------------------------------------------------- binaries mode
def run_binaries(old_bin: str, new_bin: str, args) -> tuple:
    """Runs the two binaries interleaved, one repetition per process, adding processes for unresolved cases
    up to --max-repetitions; returns the merged JSON paths."""
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="opbench-compare-")
    os.makedirs(out_dir, exist_ok=True)
    print(f"[compare] writing runs to {out_dir}", file=sys.stderr)
    groups = [Group("old", old_bin, args.bench_arg), Group("new", new_bin, args.bench_arg)]

    def judge(paths: dict) -> set:
        comp = compare_runs(load_run(paths["old"]), load_run(paths["new"]), args.metric, args.alpha,
                            lambda name: args.threshold / 100, args.paired)
        return {c.name for c in comp.cases if unresolved(c)}
    plan = {"filter": args.filter, "first": args.repetitions, "most": args.max_repetitions or args.repetitions,
            "batch": args.batch, "jobs": args.jobs, "rotate": False}
    paths = run_until_resolved(groups, judge, plan, out_dir)
    print(f"[compare] merged: {paths['old']} {paths['new']}", file=sys.stderr)
    return paths["old"], paths["new"]


# ---------------------------------------------------------------- main
def parse_args(argv: list) -> argparse.Namespace:
    p = cli.Parser(
        prog="opbench-compare", description=__doc__.split(": ", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""examples:
  opbench-compare base.json head.json                     console table
  opbench-compare base.json head.json --markdown - --plot c.png
  opbench-compare --metric GB/s base.json head.json       compare a counter (higher is better)
  opbench-compare --binaries old/bench_ops new/bench_ops --filter 'LayerNorm/.*' --repetitions 10

verdicts: SLOWER/FASTER when |change| > threshold, |change| > 4.5 standard errors of the change and
p < alpha; NOISY when the case's noise is too large to resolve the threshold; UNSURE when a change
above the threshold cannot be confirmed (too few repetitions). Deterministic metrics (zero variance on
both sides, e.g. instructions) need no test. Full description: docs/compare_and_gate.md""")
    p.add_argument("old", help="old JSON (with --binaries: the old binary)")
    p.add_argument("new", help="new JSON (with --binaries: the new binary)")
    p.add_argument("--metric", default="real_time",
                   help="real_time (default), cpu_time or any counter (GB/s, TFLOP/s, instructions)")
    p.add_argument("--threshold", type=float, default=100 * DEFAULT_THRESHOLD, metavar="PCT",
                   help="smallest change that counts, percent (default %(default)g)")
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                   help="significance level of the U test (default %(default)g)")
    p.add_argument("--json", metavar="FILE", help="write the comparison as JSON ('-': stdout)")
    p.add_argument("--markdown", metavar="FILE", help="write a markdown report ('-': stdout)")
    p.add_argument("--plot", metavar="FILE.png", help="plot per-case change with noise whiskers")
    p.add_argument("--paired", action="store_true",
                   help="compare the i-th repetitions of both sides in pairs (Wilcoxon signed-rank on their log "
                        "ratios): for runs whose i-th processes ran side by side (--binaries)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the console table (auto: on a terminal, unless NO_COLOR is set)")
    g = p.add_argument_group("binaries mode")
    g.add_argument("--binaries", action="store_true", help="OLD and NEW are binaries to run")
    g.add_argument("--filter", default=".", help="--benchmark_filter regex (default: all)")
    g.add_argument("--repetitions", type=int, default=10, help="processes per binary (default 10)")
    g.add_argument("--max-repetitions", type=int, metavar="N",
                   help="sequential testing: add processes (--batch at a time) for the cases that cannot resolve "
                        "the threshold yet, up to N a side (default: --repetitions, none added)")
    g.add_argument("--batch", type=int, default=4, metavar="K", help="processes a side added per step (default 4)")
    g.add_argument("--out-dir", help="folder for the runs' JSON (default: a new temporary folder)")
    g.add_argument("--bench-arg", action="append", default=[], metavar="ARGS",
                   help="extra arguments for both binaries (repeatable), e.g. --bench-arg=--opbench_cache=warm")
    g.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes started at a time (default 1); with N > 1 bench_ops processes measure one "
                        "at a time under --opbench_gpu_lock while the others start up (bench_ops binaries only)")
    args = p.parse_args(argv)
    most = args.max_repetitions if args.max_repetitions is not None else args.repetitions
    if not (0 < args.alpha < 1 and 0 <= args.threshold < math.inf and 1 <= args.repetitions <= 10000
            and 1 <= args.jobs <= 1024 and args.repetitions <= most <= 10000 and 1 <= args.batch <= 10000):
        p.error("need 0 < alpha < 1, 0 <= threshold < inf, 1 <= repetitions <= max-repetitions <= 10000, "
                "1 <= jobs <= 1024, 1 <= batch <= 10000")
    return args


def use_colour(mode: str) -> bool:
    if mode != "auto":
        return mode == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def main(argv: list | None = None) -> int:
    return cli.run("opbench-compare", _main, argv)


def _main(argv: list | None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        inputs = {} if args.binaries else {"OLD": args.old, "NEW": args.new}
        if args.plot:
            cli.check_figure_path("--plot", args.plot)
        cli.check_outputs(inputs, {"--json": args.json, "--markdown": args.markdown, "--plot": args.plot})
        old_path, new_path = (run_binaries(args.old, args.new, args) if args.binaries
                              else (args.old, args.new))
        comp = compare_runs(load_run(old_path), load_run(new_path), args.metric, args.alpha,
                            lambda name: args.threshold / 100, args.paired)
        if args.plot and len(comp.cases) > PLOT_MAX_CASES:
            raise InputError(f"--plot draws at most {PLOT_MAX_CASES} cases, these runs share {len(comp.cases)}: "
                             "narrow them (--filter) or use --markdown / --json")
        if "-" not in (args.json, args.markdown):
            sys.stdout.write(render_console(comp, use_colour(args.color)))
        if args.json:
            write_text(args.json, json.dumps(as_dict(comp), indent=1) + "\n")
        if args.markdown:
            write_text(args.markdown, render_markdown(comp))
        if args.plot:
            write_plot(comp, args.plot)
    except InputError as e:
        print(f"opbench-compare: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"opbench-compare: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
