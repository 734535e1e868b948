"""opbench-gate: The CI performance gate. Fails (exit 1) on a real regression or a missed target, and ends
INCONCLUSIVE (exit 4) when a case cannot resolve its threshold.

Regression: a case whose slowdown is above its threshold (policy rules, first match) AND more than
4.5 standard errors of the change AND p < alpha (two-sided Mann-Whitney U), with at least min_repetitions
repetitions on each side. Also failing: a case that ran in BASE but fails in NEW; an experiment row
(--experiments CSV) whose actual misses its target by more than the tolerance. An allow-list entry
(pattern + reason) turns an expected failure into a printed ALLOWED line.
Inconclusive: a case too noisy to resolve its threshold (NOISY), or a slowdown above it that the test cannot
confirm (UNSURE); the report names each with the repetitions that would resolve it (resolve.py). It is never
a pass unless the policy says `"inconclusive": "pass"`.
Exit status: 0 PASS, 1 FAIL, 2 unusable input (missing or malformed file, bad policy, no common cases,
fewer repetitions than the policy needs), 4 INCONCLUSIVE.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import io
import math
import re
import sys
from dataclasses import dataclass, field

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError, load_run
from opbench_tools.compare import fmt_change, fmt_p, fmt_value, throttle_text
from opbench_tools.gate_policy import Policy, load_policy
from opbench_tools.json_input import read_text
from opbench_tools.resolve import advice, unresolved
from opbench_tools.stats import NOISE_Z, RERUN_ADVICE, CaseResult, Comparison, compare_runs

FAILING = ("regression", "failed", "target", "missing", "throttled-fail")
BLOCKING = FAILING + ("inconclusive",)   # what an allow entry can let through
CONSOLE_COLUMNS = 100   # report lines longer than this continue on indented lines


# ---------------------------------------------------------------- findings
@dataclass
class Finding:
    kind: str              # regression, failed, target, missing (failing); inconclusive; unsure, ... (notes)
    key: str               # what allow patterns match: the case name, or name/dtype/metric for rows
    detail: str
    allowed: str | None = None

    @property
    def failing(self) -> bool:
        return self.kind in FAILING and self.allowed is None

    @property
    def inconclusive(self) -> bool:
        return self.kind == "inconclusive" and self.allowed is None


@dataclass
class Outcome:
    findings: list = field(default_factory=list)
    undersampled: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    compared: int = 0
    rows_checked: int = 0
    inconclusive_fails: bool = True   # the policy's "inconclusive": "fail"

    def unresolved(self) -> list:
        """The names of the cases that cannot resolve their threshold (not allowed by the policy)."""
        return [f.key for f in self.findings if f.inconclusive]

    def status(self) -> int:
        if any(f.failing for f in self.findings):
            return 1
        if self.undersampled or (self.compared == 0 and self.rows_checked == 0):
            return cli.UNUSABLE   # too few repetitions, or nothing was checked at all: never a bare PASS
        if self.inconclusive_fails and self.unresolved():
            return cli.INCONCLUSIVE
        return 0


def check_runs(base: str, new: str, policy: Policy, out: Outcome) -> Comparison:
    """Adds the findings of comparing BASE with NEW to `out`; returns the comparison they came from."""
    comp = compare_runs(load_run(base), load_run(new), policy.metric, policy.alpha, policy.threshold_for,
                        policy.paired)
    out.compared = len(comp.cases)
    out.inconclusive_fails = policy.inconclusive == "fail"
    out.notes.append(f"{policy.metric}: {len(comp.cases)} cases, {comp.old_reps} vs {comp.new_reps} "
                     f"repetitions{' (paired)' if policy.paired else ''}, alpha {policy.alpha:g}; "
                     f"geomean {fmt_change(comp.geomean_change)}")
    for c in comp.cases:
        if c.old and c.new and c.test != "deterministic" and min(c.old.n, c.new.n) < policy.min_repetitions:
            out.undersampled.append(f"{c.name} ({c.old.n} vs {c.new.n})")
            continue
        finding = case_finding(c, policy.metric, policy.alpha)
        if finding:
            out.findings.append(finding)
        if c.throttled:
            kind = "throttled-fail" if policy.fail_on_throttled else "throttled"
            out.findings.append(Finding(kind, c.name, throttle_text(c) + (
                " (the policy's fail_on_throttled)" if policy.fail_on_throttled
                else "; its verdict may reflect the machine, not the code")))
    kind = "missing" if policy.fail_on_missing else "removed"
    out.findings += [Finding(kind, n, "in BASE, not in NEW") for n in comp.only_old]
    out.findings += [Finding("added", n, "in NEW only") for n in comp.only_new]
    return comp


def case_finding(c: CaseResult, metric: str, alpha: float) -> Finding | None:
    """What the gate says about one compared case; None when it is SAME. (Throttling: throttle_finding.)"""
    if c.verdict == "FAILED":
        kind = {("new",): "failed", ("old", "new"): "failed-both"}.get(c.failed, "failed-before")
        return Finding(kind, c.name, c.note)
    if c.verdict == "N/A":
        return Finding("n/a", c.name, c.note)
    numbers = (f"{fmt_value(c.old.median, metric)} -> {fmt_value(c.new.median, metric)}, "
               f"{fmt_change(c.change)}")
    # The figures the rule uses: p against alpha, and NOISE_Z standard errors of the change.
    stats = (f"p={fmt_p(c)}, {NOISE_Z:g} se = {100 * NOISE_Z * (c.stderr or 0):.1f}%, "
             f"{c.old.n} vs {c.new.n} reps")
    limit = f"{100 * c.threshold:g}%"
    if c.verdict == "SLOWER":
        return Finding("regression", c.name, f"{numbers} > {limit} allowed; {stats}")
    if unresolved(c):
        why = (f"noise too large to resolve {limit}" if c.verdict == "NOISY"
               else f"above {limit} but not significant")
        return Finding("inconclusive", c.name, f"{numbers}; {stats}; {why}; {advice(c, alpha)}")
    if c.verdict == "UNSURE":   # faster by more than NOISE_Z se: not a regression, whatever p says
        return Finding("unsure", c.name, f"{numbers}; {stats}; faster, not significant")
    if c.verdict == "FASTER":
        return Finding("faster", c.name, f"{numbers}; {stats}")
    return None


def lower_is_better_row(metric: str) -> bool:
    m = metric.lower()
    return ("time" in m or "latency" in m) and not (m.endswith("/s") or "per_sec" in m)


def check_experiments(path: str, policy: Policy, out: Outcome) -> None:
    tol = policy.target_tolerance_pct / 100
    rows = read_rows(path)
    with_target = sum(1 for line, row in rows if _csv_number(path, line, "target", row["target"]) is not None)
    out.notes.append(f"targets: {with_target} of {len(rows)} experiment rows have a target and were checked")
    out.rows_checked += with_target
    for line, row in rows:
        key = f"{row['name']}/{row.get('dtype', '')}/{row['metric']}"
        where = row.get("backend", "") or row.get("device", "")
        label = f"{row['name']} [{row['metric']}, {row.get('dtype', '')}, {where}]"
        target, actual = _csv_number(path, line, "target", row["target"]), row["actual"].strip()
        if target is None:
            continue
        value = _csv_number(path, line, "actual", actual, strict=False)
        if value is None:
            out.findings.append(Finding("target", key, f"{label}: no measured value ({row.get('status', '')!s})"))
            continue
        lower = lower_is_better_row(row["metric"])
        bound = target * (1 + tol) if lower else target * (1 - tol)
        if (value > bound) if lower else (value < bound):
            sign, op = ("+", ">") if lower else ("-", "<")
            out.findings.append(Finding("target", key, f"{label}: actual {value:.4g} {op} {bound:.4g} = target "
                                        f"{target:.4g} {sign} {policy.target_tolerance_pct:g}% "
                                        f"({100 * value / target:.1f}% of target)"))


def read_rows(path: str) -> list:
    """[(line, row)] of an experiments CSV (read within json_input's size limit); InputError naming it."""
    text = read_text(path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = {"name", "metric", "target", "actual"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(f"{path}: not an experiments CSV: missing column(s) {', '.join(sorted(missing))} "
                             "(header: name,metric,target,actual,dtype,device,arch,is_model,...)")
        return [(reader.line_num, {k: v if isinstance(v, str) else "" for k, v in row.items()}) for row in reader]
    except csv.Error as e:
        raise InputError(f"{path}: cannot read: {e}") from None


def _csv_number(path: str, line: int, column: str, text: str, strict: bool = True) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return value
    if strict:
        raise InputError(f"{path}:{line}: {column} is not a number: {text!r}")
    return None


def apply_allow(policy: Policy, out: Outcome, today: datetime.date) -> None:
    used = set()
    for f in out.findings:
        if f.kind not in BLOCKING:
            continue
        for i, regex, reason, expires in policy.allow:
            if regex.search(f.key) and (expires is None or expires >= today):
                f.allowed, _ = reason, used.add(i)
                break
    for i, regex, _, expires in policy.allow:
        if expires is not None and expires < today:
            out.findings.append(Finding("allow-expired", f"allow[{i}]", f"{regex.pattern!r} expired on {expires}"))
        elif i not in used:
            out.findings.append(Finding("allow-unused", f"allow[{i}]",
                                        f"{regex.pattern!r} matched no failure nor inconclusive case"))


# ---------------------------------------------------------------- report
LABELS = {"regression": "REGRESSION", "failed": "FAILED CASE", "target": "TARGET MISS", "missing": "MISSING",
          "inconclusive": "INCONCLUSIVE", "unsure": "unsure", "faster": "faster", "removed": "removed", "added": "added",
          "failed-both": "fails in both", "failed-before": "fixed", "n/a": "not compared",
          "allow-expired": "allow expired", "allow-unused": "allow unused", "throttled": "THROTTLED",
          "throttled-fail": "THROTTLED"}


def report_lines(out: Outcome, policy: Policy, min_reps: int) -> list:
    lines = [f"gate: policy {policy.path}"] + [f"gate: {n}" for n in out.notes]
    for f in out.findings:
        if f.failing:
            lines.append(f"FAIL {LABELS[f.kind]}: {f.key}: {f.detail}")
    for f in out.findings:
        if f.inconclusive:
            lead = "INCONCLUSIVE" if out.inconclusive_fails else "note inconclusive (the policy passes it)"
            lines.append(f"{lead}: {f.key}: {f.detail}")
    for f in out.findings:
        if f.kind in BLOCKING and f.allowed is not None:
            lines.append(f"ALLOWED {LABELS[f.kind]}: {f.key}: {f.detail} (reason: {f.allowed})")
    for f in out.findings:
        if f.kind not in BLOCKING:
            lines.append(f"note {LABELS.get(f.kind, f.kind)}: {f.key}: {f.detail}")
    if out.undersampled:
        lines.append(f"UNUSABLE: {len(out.undersampled)} case(s) have fewer than {min_reps} repetitions, the "
                     f"policy's min_repetitions: {', '.join(out.undersampled[:5])}"
                     f"{' ...' if len(out.undersampled) > 5 else ''}; {RERUN_ADVICE}")
    lines.append("gate: " + verdict_line(out))
    return [part for line in lines for part in wrap(line)]


def wrap(line: str, width: int = CONSOLE_COLUMNS) -> list:
    """`line` in pieces of at most `width` columns, broken after '; ' or ', ' (a piece without one stays
    whole); the pieces after the first are indented by four spaces."""
    pieces = [""]
    for part in re.split(r"(?<=; )|(?<=, )", line):
        indent = "    " if len(pieces) > 1 else ""
        if pieces[-1] and len(indent + pieces[-1] + part) > width:
            pieces.append(part)
        else:
            pieces[-1] += part
    return [pieces[0].rstrip()] + ["    " + p.rstrip() for p in pieces[1:]]


WORDS = {0: "PASS", 1: "FAIL", cli.UNUSABLE: "UNUSABLE INPUT", cli.INCONCLUSIVE: "INCONCLUSIVE"}


def verdict_line(out: Outcome) -> str:
    failing = [f for f in out.findings if f.failing]
    allowed = sum(1 for f in out.findings if f.kind in BLOCKING and f.allowed is not None)
    status = out.status()
    counts: dict = {}
    for f in failing:
        counts[LABELS[f.kind]] = counts.get(LABELS[f.kind], 0) + 1
    plural = {"REGRESSION": "regressions", "FAILED CASE": "failed cases", "TARGET MISS": "target misses"}
    parts = [f"{n} {plural.get(k, k) if n > 1 else k}".lower() for k, n in counts.items()]
    parts += [inconclusive_part(out)] if out.unresolved() else []
    parts += [f"{allowed} allowed"] if allowed else []
    return f"{WORDS[status]} (exit {status})" + (": " + ", ".join(parts) if parts else "")


def inconclusive_part(out: Outcome) -> str:
    """'2 cases cannot resolve their threshold (A, B)', and whether the policy lets that pass."""
    names = out.unresolved()
    shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
    relaxed = "" if out.inconclusive_fails else ", passed by the policy's \"inconclusive\": \"pass\""
    return f"{len(names)} case{'s' if len(names) > 1 else ''} cannot resolve the threshold ({shown}){relaxed}"


def render_markdown(out: Outcome, policy: Policy) -> str:
    icon = {0: "✅", 1: "❌", cli.UNUSABLE: "⚠️", cli.INCONCLUSIVE: "❔"}[out.status()]
    md = [f"### {icon} opbench perf gate: {verdict_line(out)}", "",
          f"<sub>policy `{policy.path}`; " + "; ".join(out.notes) + "</sub>", ""]
    rows = [(("❌ " if f.failing else "❔ " if f.inconclusive else "☑️ allowed " if f.allowed else "")
             + LABELS.get(f.kind, f.kind), f)
            for f in sorted(out.findings, key=lambda f: (not f.failing, not f.inconclusive, f.allowed is None,
                                                         f.kind))]
    if rows:
        md += ["| | case | details |", "|---|---|---|"]
        for label, f in rows:
            detail = f.detail + (f" (reason: {f.allowed})" if f.allowed else "")
            md.append(f"| {label} | `{f.key.replace('|', '/')}` | {detail.replace('|', '/')} |")
    if out.undersampled:
        md += ["", f"⚠️ {len(out.undersampled)} case(s) below min_repetitions ({policy.min_repetitions})."]
    return "\n".join(md) + "\n"


def parse_args(argv: list) -> argparse.Namespace:
    p = cli.Parser(
        prog="opbench-gate", description=__doc__.split(": ", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""examples:
  opbench-gate base.json head.json                       the packaged policy (perf-policy.json)
  opbench-gate --policy my-policy.json base.json head.json --experiments head.csv --markdown gate.md
  opbench-gate --experiments rows.csv                     targets only

policy (JSON; every key optional):
  {"metric": "real_time", "alpha": 0.05, "min_repetitions": 9, "max_slowdown_pct": 3,
   "rules": [{"pattern": "^Softmax/", "max_slowdown_pct": 8}],       first match wins
   "target_tolerance_pct": 5, "fail_on_missing": false, "fail_on_throttled": false,
   "allow": [{"pattern": "^LayerNorm/fp32/", "reason": "PR 42 trades speed for accuracy",
              "expires": "2027-01-31"}],
   "inconclusive": "fail",                a case that cannot resolve its threshold: exit 4 ("pass": exit 0)
   "paired": false}                       true: the i-th repetitions of both sides ran side by side
exit status: 0 PASS, 1 FAIL, 2 unusable input, 4 INCONCLUSIVE (a case cannot resolve its threshold; the
report names it and the repetitions that would resolve it). Full description: docs/compare_and_gate.md""")
    p.add_argument("runs", nargs="*", metavar="BASE.json NEW.json", help="Google Benchmark JSON of base and new")
    p.add_argument("--policy", metavar="FILE", help="policy JSON (default: the packaged perf-policy.json)")
    p.add_argument("--experiments", metavar="ROWS.csv", help="experiment rows to check against their targets")
    p.add_argument("--markdown", metavar="FILE", help="also write the result as markdown (a CI job summary)")
    args = p.parse_args(argv)
    if len(args.runs) not in (0, 2) or (not args.runs and not args.experiments):
        p.error("give BASE.json NEW.json, --experiments ROWS.csv, or both")
    return args


def main(argv: list | None = None) -> int:
    return cli.run("opbench-gate", _main, argv)


def _main(argv: list | None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        inputs = {"BASE": args.runs[0], "NEW": args.runs[1]} if args.runs else {}
        cli.check_outputs(dict(inputs, **{"--policy": args.policy, "--experiments": args.experiments}),
                          {"--markdown": args.markdown})
        policy = load_policy(args.policy)
        out = Outcome()
        if args.runs:
            check_runs(args.runs[0], args.runs[1], policy, out)
        if args.experiments:
            check_experiments(args.experiments, policy, out)
            out.notes.append(f"targets: {args.experiments}, tolerance {policy.target_tolerance_pct:g}%")
        if out.compared == 0 and out.rows_checked == 0:
            out.notes.append("nothing was checked: no compared case and no experiment row with a target")
        apply_allow(policy, out, datetime.date.today())
        print("\n".join(report_lines(out, policy, policy.min_repetitions)))
        if args.markdown:
            cli.write_atomically(args.markdown, render_markdown(out, policy))
    except InputError as e:
        print(f"opbench-gate: error: {e}", file=sys.stderr)
        return cli.UNUSABLE
    except OSError as e:
        print(f"opbench-gate: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return cli.UNUSABLE
    return out.status()


if __name__ == "__main__":
    sys.exit(main())
