"""Statistics behind opbench-compare and opbench-gate: per-case change, its noise, a significance test, a
verdict.

For each case and metric: the median over repetitions on each side; the change as a "slowdown"
(new/old - 1 for lower-is-better metrics, old/new - 1 for throughputs, so +5% always means 5% worse and
the figure is the same whether time or GB/s is compared); the spread (robust relative standard
deviation of one repetition: the Qn scale of both sides' relative residuals, pooled); the standard error
of the change (1.2533 * spread * sqrt(1/n_old + 1/n_new), the median's); a two-sided Mann-Whitney U test
over the repetitions (Welch's t-test from mean/stddev when only aggregates exist). Paired (opbench-compare
--paired, the policy's "paired"; the i-th repetitions of the two sides ran side by side): the change from the
median of the per-pair log ratios, their Qn as the spread, se = 1.2533 * spread / sqrt(n), and a Wilcoxon
signed-rank test; a case whose sides cannot be paired (unequal counts) is compared unpaired. Verdicts:
  SLOWER / FASTER  |change| > threshold, |change| > NOISE_Z * stderr, and p < alpha (or a deterministic
                   metric: zero variance on both sides, no test needed)
  NOISY            the case's noise is too large to resolve the threshold: NOISE_Z * stderr > threshold
  UNSURE           a change above the threshold that the test cannot confirm (too few repetitions)
  SAME             otherwise;  FAILED: the case failed on a side;  N/A: the metric is missing or zero
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from opbench_tools.benchmark_json import (DERIVED_COUNTERS, DETERMINISTIC, TIME_METRICS, Case, InputError, Run,
                                          check_metric, common_cases, higher_is_better)

QN_TO_SD = 2.2219         # Qn of a normal sample -> its standard deviation
MEDIAN_SE = 1.2533        # standard error of a median / that of a mean (normal data)
# What to run for repetitions that can be trusted: separate processes (in-process repetitions of one
# binary agree more closely than two processes do, so a test on them cries wolf).
RERUN_ADVICE = ("run opbench-compare --binaries OLD_BINARY NEW_BINARY --repetitions 10 "
                "(one process per repetition)")
NOISE_Z = 4.5             # a change must exceed NOISE_Z standard errors of itself to count
MIN_REPS_WARNING = 9      # fewer repetitions than this: p-values are weak, say so
DEFAULT_ALPHA = 0.05
DEFAULT_THRESHOLD = 0.03


@dataclass
class Side:
    n: int
    median: float
    values: list = field(default_factory=list)   # raw repetitions (empty when from aggregates)
    mean: float | None = None                    # aggregates only
    stddev: float | None = None                  # aggregates only
    noise: float | None = None                   # median of the entries' noise_pct / 100


@dataclass
class CaseResult:
    name: str
    verdict: str
    threshold: float
    old: Side | None = None
    new: Side | None = None
    change: float | None = None        # fraction, + = slower (worse)
    p_value: float | None = None
    test: str | None = None            # "mann-whitney", "welch", "deterministic" or None
    spread: float | None = None        # relative sd of one repetition
    stderr: float | None = None        # standard error of `change`
    counters: dict = field(default_factory=dict)   # counter -> {"old", "new", "change"} (plain ratio - 1)
    note: str = ""
    failed: tuple = ()                 # the sides ("old", "new") on which the case failed
    throttled: dict = field(default_factory=dict)   # side -> repetitions flagged THROTTLED (bench_ops)


@dataclass
class Comparison:
    old_path: str
    new_path: str
    metric: str
    alpha: float
    cases: list
    only_old: list
    only_new: list
    warnings: list
    geomean_change: float | None
    old_reps: int
    new_reps: int

    def counts(self) -> dict:
        out: dict = {}
        for case in self.cases:
            out[case.verdict] = out.get(case.verdict, 0) + 1
        return out


def median(values) -> float:
    """The median of a sequence of floats (a list or an array('d')); O(n) with numpy."""
    array = numpy().asarray(values, dtype=float)
    mid = len(array) // 2
    if len(array) % 2:
        return float(numpy().partition(array, mid)[mid])
    low, high = numpy().partition(array, (mid - 1, mid))[mid - 1: mid + 1]
    return 0.5 * (float(low) + float(high))


def qn_scale(x: list) -> float:
    """Rousseeuw-Croux Qn: a robust standard deviation (50% breakdown, 82% efficiency at the normal,
    twice MAD's), the k-th smallest pairwise distance, k = C(n//2 + 1, 2), with the finite-n factor.
    O(n) memory: the distances are never all formed (pairwise.kth_pairwise_distance)."""
    numpy()   # pairwise needs it: InputError with what to do when it is missing
    from opbench_tools.pairwise import kth_pairwise_distance
    n = len(x)
    h = n // 2 + 1
    finite_n = n / (n + 1.4) if n % 2 else n / (n + 3.8)
    return QN_TO_SD * finite_n * kth_pairwise_distance(x, h * (h - 1) // 2)


def side_of(case: Case, metric: str) -> Side | None:
    if metric in case.values:
        vals = case.values[metric]
        noise = case.values.get("noise_pct")
        return Side(len(vals), median(vals), vals, noise=median(noise) / 100 if noise else None)
    agg = case.aggregates
    center = agg.get("median", {}).get(metric, agg.get("mean", {}).get(metric))
    if center is None:
        return None
    return Side(case.aggregate_reps, center, mean=agg.get("mean", {}).get(metric),
                stddev=agg.get("stddev", {}).get(metric))


def slowdown(old: float, new: float, metric: str) -> float | None:
    """+0.05 = 5% worse. Throughputs: old/new - 1 (the equivalent time change)."""
    if old == new:
        return 0.0
    num, den = (old, new) if higher_is_better(metric) else (new, old)
    if den <= 0 or num < 0:
        return None
    return num / den - 1


def is_deterministic(metric: str, old: Side, new: Side) -> bool:
    """Known deterministic metrics, and counters constant over >= 2 repetitions on both sides. Never a
    time or throughput: identical timings are timer quantization, and the U test handles them."""
    if metric in DETERMINISTIC:
        return True
    if metric in TIME_METRICS or higher_is_better(metric):
        return False
    return all(len(s.values) >= 2 and numpy().ptp(numpy().asarray(s.values)) == 0 for s in (old, new))


def pooled_spread(old: Side, new: Side) -> float | None:
    """Relative sd of one repetition: robust, pooled over both sides; None when it cannot be estimated."""
    if old.stddev is not None and new.stddev is not None and old.mean and new.mean:
        return math.sqrt(0.5 * ((old.stddev / old.mean) ** 2 + (new.stddev / new.mean) ** 2))
    if len(old.values) >= 2 and len(new.values) >= 2 and old.median > 0 and new.median > 0:
        np = numpy()
        return qn_scale(np.concatenate([np.asarray(s.values, dtype=float) / s.median - 1 for s in (old, new)]))
    # One repetition: the entries' own sampling noise gives the error of their median.
    noises = [s.noise for s in (old, new)]
    return max(noises) if all(x is not None for x in noises) else None


def standard_error(old: Side, new: Side, spread: float | None, own_samples: tuple) -> float | None:
    if spread is None:
        return None
    if min(old.n, new.n) >= 2:
        return MEDIAN_SE * spread * math.sqrt(1 / old.n + 1 / new.n)
    samples = [s for s in own_samples if s]
    return MEDIAN_SE * spread * math.sqrt(2 / min(samples)) if samples else None


def scipy_stats():
    """scipy.stats, or InputError with what to do: run the tool with a python that has scipy."""
    try:
        import scipy.stats
    except ImportError:
        raise _missing("scipy") from None
    return scipy.stats


def numpy():
    """numpy, or InputError with what to do (as scipy_stats)."""
    try:
        import numpy
    except ImportError:
        raise _missing("numpy") from None
    return numpy


def _missing(module: str) -> InputError:
    return InputError(f"the statistics need scipy and numpy; {sys.executable} lacks {module}: run the tool with "
                      "the project's venv (.venv/bin/opbench-compare ...; bash scripts/setup.sh makes it) "
                      "or install the tools with their dependencies (pip install ./tools)")


def p_value(old: Side, new: Side) -> tuple:
    """(p, test name) for a two-sided test of old vs new, or (None, None) when no test is possible."""
    if len(old.values) >= 2 and len(new.values) >= 2:
        mannwhitneyu = scipy_stats().mannwhitneyu
        return float(mannwhitneyu(old.values, new.values, alternative="two-sided").pvalue), "mann-whitney"
    if None not in (old.mean, new.mean, old.stddev, new.stddev) and min(old.n, new.n) >= 2:
        if old.stddev == 0 and new.stddev == 0:
            return (1.0 if old.mean == new.mean else 0.0), "welch"
        t = scipy_stats().ttest_ind_from_stats(old.mean, old.stddev, old.n, new.mean, new.stddev, new.n, equal_var=False)
        return float(t.pvalue), "welch"
    return None, None


def verdict(change: float, threshold: float, stderr: float | None, significant: bool) -> str:
    mde = NOISE_Z * stderr if stderr is not None else 0.0
    big = abs(change) > threshold and abs(change) > mde
    if big and significant:
        return "SLOWER" if change > 0 else "FASTER"
    if mde > threshold:
        return "NOISY"
    return "UNSURE" if big else "SAME"


def paired_log_ratios(old: Side, new: Side):
    """log(new_i / old_i) over the repetitions in order, or None when the sides cannot be paired (unequal
    counts, fewer than 2 a side, a value that is not positive)."""
    np = numpy()
    a, b = np.asarray(old.values, dtype=float), np.asarray(new.values, dtype=float)
    if len(a) != len(b) or len(a) < 2 or not (a > 0).all() or not (b > 0).all():
        return None
    return np.log(b / a)


def paired_figures(ratios, metric: str) -> tuple:
    """(change, spread, stderr, p) of paired log ratios: the change a slowdown as slowdown() gives it."""
    np = numpy()
    centre = float(np.median(ratios))
    change = math.expm1(-centre if higher_is_better(metric) else centre)
    spread = qn_scale(ratios)
    if not np.any(ratios):
        p = 1.0
    else:
        p = float(scipy_stats().wilcoxon(ratios).pvalue)
    return change, spread, MEDIAN_SE * spread / math.sqrt(len(ratios)), p


def compare_case(name: str, old: Case, new: Case, metric: str, alpha: float, threshold: float,
                 paired: bool = False) -> CaseResult:
    result = CaseResult(name, "N/A", threshold)
    errors = {side: c.error or c.broken.get(metric) for side, c in (("old", old), ("new", new))}
    if any(errors.values()):
        result.verdict = "FAILED"
        result.failed = tuple(side for side, why in errors.items() if why)
        result.note = "; ".join(f"{side}: {why}" for side, why in errors.items() if why)
        return result
    result.old, result.new = side_of(old, metric), side_of(new, metric)
    result.counters = _counters(old, new, metric)
    result.throttled = {side: n for side, n in (("old", old.throttled_repetitions()),
                                                  ("new", new.throttled_repetitions())) if n}
    if result.old is None or result.new is None:
        result.note = f"no {metric!r} in " + ("old" if result.old is None else "new")
        return result
    result.change = slowdown(result.old.median, result.new.median, metric)
    if result.change is None:
        result.note = f"{metric} is zero or negative"
        return result
    if is_deterministic(metric, result.old, result.new):
        result.test, result.spread, result.stderr = "deterministic", 0.0, 0.0
        result.verdict = verdict(result.change, threshold, 0.0, True)
        return result
    ratios = paired_log_ratios(result.old, result.new) if paired else None
    if ratios is not None:
        result.change, result.spread, result.stderr, result.p_value = paired_figures(ratios, metric)
        result.test = "wilcoxon"
        result.verdict = verdict(result.change, threshold, result.stderr, result.p_value < alpha)
        return result
    result.p_value, result.test = p_value(result.old, result.new)
    result.spread = pooled_spread(result.old, result.new)
    samples = tuple(_median_counter(c, "samples") for c in (old, new))
    result.stderr = standard_error(result.old, result.new, result.spread, samples)
    significant = result.p_value is not None and result.p_value < alpha
    result.verdict = verdict(result.change, threshold, result.stderr, significant)
    return result


def _median_counter(case: Case, counter: str) -> float | None:
    vals = case.values.get(counter)
    return median(vals) if vals else None


def _counters(old: Case, new: Case, metric: str) -> dict:
    out = {}
    for counter in DERIVED_COUNTERS:
        if counter == metric or counter not in old.values or counter not in new.values:
            continue
        o, n = median(old.values[counter]), median(new.values[counter])
        out[counter] = {"old": o, "new": n, "change": (n / o - 1) if o > 0 else None}
    return out


def compare_runs(old: Run, new: Run, metric: str = "real_time", alpha: float = DEFAULT_ALPHA,
                 threshold_for=lambda name: DEFAULT_THRESHOLD, paired: bool = False) -> Comparison:
    """Compares every case present in both runs. Raises InputError when nothing can be compared."""
    names, only_old, only_new = common_cases(old, new)
    check_metric(old, new, names, metric)
    cases = [compare_case(n, old.cases[n], new.cases[n], metric, alpha, threshold_for(n), paired) for n in names]
    ratios = [c.change + 1 for c in cases if c.change is not None and c.change > -1]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) - 1 if ratios else None
    comparison = Comparison(old.path, new.path, metric, alpha, cases, only_old, only_new, [], geomean,
                            old.max_repetitions(), new.max_repetitions())
    comparison.warnings = _warnings(comparison, {"old": old.in_process_repetitions(),
                                                 "new": new.in_process_repetitions()})
    return comparison


def _warnings(comp: Comparison, in_process: dict) -> list:
    out = []
    tested = [c for c in comp.cases if c.old and c.new and c.test != "deterministic"]
    few = [c for c in tested if min(c.old.n, c.new.n) < MIN_REPS_WARNING]
    if few:
        n = min(min(c.old.n, c.new.n) for c in few)
        out.append(f"{len(few)} case(s) have fewer than {MIN_REPS_WARNING} repetitions (as few as {n}): "
                   f"the U test is weak or impossible; {RERUN_ADVICE}")
    for side, path in (("old", comp.old_path), ("new", comp.new_path)):
        if in_process.get(side):
            out.append(f"{path}: its repetitions ran in one process (--benchmark_repetitions), which understates "
                       f"the noise between runs; {RERUN_ADVICE}")
    for label, names in (("only in old", comp.only_old), ("only in new", comp.only_new)):
        if names:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            out.append(f"{len(names)} case(s) {label}: {shown}")
    return out


def as_dict(comp: Comparison) -> dict:
    """The comparison as plain JSON-able data (opbench-compare --json)."""
    def side(s: Side | None):
        return None if s is None else {"n": s.n, "median": s.median, "values": list(s.values)}
    return {
        "old": comp.old_path, "new": comp.new_path, "metric": comp.metric,
        "higher_is_better": higher_is_better(comp.metric), "alpha": comp.alpha,
        "geomean_change_pct": None if comp.geomean_change is None else 100 * comp.geomean_change,
        "counts": comp.counts(), "warnings": comp.warnings,
        "only_in_old": comp.only_old, "only_in_new": comp.only_new,
        "cases": [{"name": c.name, "verdict": c.verdict, "threshold_pct": 100 * c.threshold,
                   "old": side(c.old), "new": side(c.new),
                   "change_pct": _pct(c.change), "p_value": c.p_value, "test": c.test,
                   "spread_pct": _pct(c.spread), "stderr_pct": _pct(c.stderr),
                   "counters": {k: {"old": v["old"], "new": v["new"], "change_pct": _pct(v["change"])}
                                for k, v in c.counters.items()},
                   "note": c.note} for c in comp.cases],
    }


def _pct(x: float | None) -> float | None:
    return None if x is None else 100 * x
