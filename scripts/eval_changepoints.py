#!/usr/bin/env python3
"""Evaluates opbench-changepoints (E-divisive means, tools/opbench_tools/edivisive.py) and prints markdown
tables: precision, recall and false positives per configuration.

Synthetic series (--series per configuration, seeded): 30 nightly points of a 100 us case, each point
lognormal noise of the stated CV, and 3% of points an outlier 2-8% slower (a busy night). A step series
has one step of +2% or +5% at a point drawn from 8..22; an A/A series has none. A step counts as found
when a change point lies within TOLERANCE points of it; every other change point is a false positive.

Real series (--real): the committed H200 runs of records/NVIDIA_H200/compare, one point per bench_ops
process: aa_old and aa_new interleaved as they ran (20 processes of the same binary, cold L2), then
ab_cold (10 more of that binary, cold) and ab_warm (10 with a warm L2), run in that order within minutes
on 2026-11-21. The 54 A/A-only series have 20 points; the 16 Gemv/LayerNorm bf16 series have 40, with a
true step at point 30 in the 13 cases the gate calls FASTER (warm against cold: 3.4%-48%); in the other 3
the warm cache changes 0.3-2%. Any step before point 29 is a false positive (same binary, same settings).
Run the real series through the console script itself, from per-process files written to a temporary
folder, so the reading of the files is evaluated too.

  .venv/bin/python scripts/eval_changepoints.py [--series N] [--seed S] [--real] [--json FILE]
  (without the venv: PYTHONPATH=tools python3 scripts/eval_changepoints.py ...)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

from opbench_tools import changepoints
from opbench_tools.benchmark_json import load_run
from opbench_tools.edivisive import change_points
from opbench_tools.stats import compare_runs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LENGTH = 30                 # nights in a synthetic series
STEP_AT = (8, 22)           # the step's first point, drawn uniformly from this range (inclusive)
OUTLIER_SHARE, OUTLIER_PCT = 0.03, (2.0, 8.0)
TOLERANCE = 1               # points between a found change point and the true step
CONFIGS = [(0.0, 0.5), (0.0, 1.0), (2.0, 0.5), (2.0, 1.0), (5.0, 0.5), (5.0, 1.0)]   # (step %, CV %)
RECORDS = os.path.join(ROOT, "records", "NVIDIA_H200", "compare")
WARM_STEP = 30              # the first ab_warm point of the real series


def synthetic(rng, step_pct: float, cv_pct: float) -> tuple:
    """(values, true step index or None) of one synthetic nightly series."""
    values = 100.0 * np.exp(rng.normal(0.0, cv_pct / 100, LENGTH))
    outliers = rng.random(LENGTH) < OUTLIER_SHARE
    values[outliers] *= 1 + rng.uniform(*OUTLIER_PCT, outliers.sum()) / 100
    if not step_pct:
        return values, None
    at = int(rng.integers(STEP_AT[0], STEP_AT[1] + 1))
    values[at:] *= 1 + step_pct / 100
    return values, at


def score(found: list, truth: list) -> dict:
    """TP/FP/FN of found change point indices against true step indices (within TOLERANCE)."""
    hits = [t for t in truth if any(abs(f - t) <= TOLERANCE for f in found)]
    false = [f for f in found if not any(abs(f - t) <= TOLERANCE for t in truth)]
    return {"steps": len(truth), "found": len(hits), "detections": len(found), "false": len(false)}


def evaluate_synthetic(series: int, seed: int) -> list:
    rows = []
    for step_pct, cv_pct in CONFIGS:
        rng = np.random.default_rng([seed, int(10 * step_pct), int(10 * cv_pct)])
        total = {"steps": 0, "found": 0, "detections": 0, "false": 0, "series_with_false": 0}
        for i in range(series):
            values, at = synthetic(rng, step_pct, cv_pct)
            found = [c.index for c in change_points(values, changepoints.DEFAULT_ALPHA,
                                                    changepoints.DEFAULT_PERMUTATIONS,
                                                    changepoints.DEFAULT_MIN_SEGMENT, seed=seed + i)]
            s = score(found, [] if at is None else [at])
            for k in ("steps", "found", "detections", "false"):
                total[k] += s[k]
            total["series_with_false"] += s["false"] > 0
        rows.append(dict(total, label=f"{'A/A' if not step_pct else f'+{step_pct:g}% step'}, CV {cv_pct:g}%",
                         series=series))
    return rows


# ---------------------------------------------------------------- the real series
def write_points(folder: str) -> None:
    """One Google Benchmark JSON per bench_ops process of the records, numbered in run order."""
    sources = [("aa_old", "aa_new"), ("ab_cold",), ("ab_warm",)]
    index = 0
    for group in sources:
        data = {name: json.load(open(os.path.join(RECORDS, f"{name}.json"))) for name in group}
        for rep in range(10):
            for name in group:   # the A/A pair ran interleaved: old 0, new 0, old 1, ...
                entries = [e for e in data[name]["benchmarks"] if e.get("repetition_index") == rep]
                with open(os.path.join(folder, f"{index:03d}_{name}_{rep}.json"), "w") as f:
                    json.dump({"context": data[name]["context"], "benchmarks": entries}, f)
                index += 1


def warm_truth() -> set:
    """The cases whose warm-against-cold change the gate calls FASTER (the true steps)."""
    comp = compare_runs(load_run(os.path.join(RECORDS, "ab_cold.json")), load_run(os.path.join(RECORDS, "ab_warm.json")))
    return {c.name for c in comp.cases if c.verdict == "FASTER"}


def evaluate_real(min_change_pct: float) -> dict:
    truth = warm_truth()
    with tempfile.TemporaryDirectory() as folder:
        write_points(folder)
        out = os.path.join(folder, "steps.json")
        argv = [folder, "--json", out, "--min-change", f"{min_change_pct:g}"]
        with open(os.devnull, "w") as quiet:
            stdout, sys.stdout = sys.stdout, quiet
            try:
                code = changepoints.main(argv)
            finally:
                sys.stdout = stdout
        if code != 0:
            raise SystemExit(f"opbench-changepoints exited {code}")
        result = json.load(open(out))["series"]
    found_true, other_warm, false = 0, [], []
    for r in result:
        at_warm = [s for s in r["steps"] if abs(s["point"] - WARM_STEP) <= TOLERANCE]
        found_true += r["series"] in truth and bool(at_warm)
        other_warm += [(r["series"], s["change_pct"]) for s in at_warm if r["series"] not in truth]
        false += [(r["series"], s["point"], s["change_pct"]) for s in r["steps"]
                  if abs(s["point"] - WARM_STEP) > TOLERANCE]
    return {"min_change_pct": min_change_pct, "series": len(result), "true_steps": len(truth), "found": found_true,
            "detections": found_true + len(other_warm) + len(false), "other_warm": other_warm, "false": false}


# ---------------------------------------------------------------- tables
def ratio(a: int, b: int) -> str:
    return "-" if b == 0 else f"{a / b:.2f}"


def synthetic_table(rows: list) -> list:
    lines = ["| series (30 points) | series | true steps | found (recall) | change points | precision | "
             "false positives | series with a false positive |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tp = r["detections"] - r["false"]
        lines.append(f"| {r['label']} | {r['series']} | {r['steps']} | {r['found']} ({ratio(r['found'], r['steps'])}) | "
                     f"{r['detections']} | {ratio(tp, r['detections'])} | {r['false']} | "
                     f"{100 * r['series_with_false'] / r['series']:.1f}% |")
    return lines


def real_table(rows: list) -> list:
    lines = ["| H200 records, --min-change | series | true steps (>= 3.4%) | found (recall) | precision | "
             "false positives (same binary) | at the warm step, below 3% |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        tp = r["found"]
        false = ", ".join(f"{name} at {point} ({pct:+.1f}%)" for name, point, pct in r["false"]) or "none"
        other = ", ".join(f"{name} ({pct:+.1f}%)" for name, pct in r["other_warm"]) or "none"
        lines.append(f"| {r['min_change_pct']:g}% | {r['series']} | {r['true_steps']} | {tp} "
                     f"({ratio(tp, r['true_steps'])}) | {ratio(tp, tp + len(r['false']))} | {len(r['false'])}: {false} | "
                     f"{other} |")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", type=int, default=200, help="synthetic series per configuration (default 200)")
    p.add_argument("--seed", type=int, default=1, help="seed of the synthetic series (default 1)")
    p.add_argument("--real", action="store_true", help="also the real series from records/NVIDIA_H200/compare")
    p.add_argument("--json", help="write the figures as JSON")
    args = p.parse_args()
    rows = evaluate_synthetic(args.series, args.seed)
    print("\n".join(synthetic_table(rows)))
    real = [evaluate_real(pct) for pct in (0.0, 1.0)] if args.real else []
    if real:
        print()
        print("\n".join(real_table(real)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"synthetic": rows, "real": real}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
