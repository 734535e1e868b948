"""opbench-gate-selftest: Measures the CI gate on this runner and build: how often it cries wolf, how often
it catches a slowdown of a chosen size, and the smallest slowdown it reliably catches per case.

Run it first when adopting opbench-gate. It runs the binary the way CI would compare two builds (one process
per repetition, `--repetitions` per side, the policy's rule), in groups of processes, three a round:
  base groups B0 .. B(R-1) and control groups C0 .. C(R-1)   the binary as it is
  slow groups S0 .. S(R-1) the same binary with --opbench_inject_slowdown=PCT (each selected case timed,
                           then timed again with PCT% of that time added to every iteration)
A round's three groups run interleaved, a process of each in turn (the order rotating from one
repetition to the next), as opbench-compare interleaves old and new: whatever drifts on the machine during
the round reaches every side alike. A/A round i compares Bi with Ci; a false alarm is a round in which
the gate fails. Detection round i compares Bi with Si; a case is caught when the gate calls it a
regression. (Comparing the base groups of consecutive rounds instead would put the machine's drift
between rounds into the A/A comparison, which on a busy 2-core CI runner fails an A/A round now and
then.) The smallest reliably caught slowdown of a case is read off the A/A rounds: the
gate needs a change above max(threshold, 4.5 standard errors); a true slowdown s shifts a round's change
c to about c + s, so s must exceed max(threshold, 4.5 se) - c in 95% of rounds (the 95th percentile over
rounds; the U test's p is far below alpha at such shifts with >= 5 repetitions).
With --time-budget the runs stop being started once that many seconds have passed, and only the rounds
whose groups all finished are evaluated (the output says how many of --rounds that was).
Exit status: 0 when no A/A round failed and every case was caught in >= 95% of rounds, 1 otherwise,
2 on unusable input. Full description: docs/compare_and_gate.md ("Is the gate trustworthy here?").
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError, merge_runs
from opbench_tools.benchmark_processes import Process, benchmark_command, run_processes
from opbench_tools.gate import Outcome, check_runs
from opbench_tools.gate_policy import load_policy
from opbench_tools.stats import NOISE_Z

RELIABLE = 0.95


KINDS = ("B", "C", "S")   # base, control (A/A against base), slowed (detection against base)


def plan(args, out_dir: str) -> tuple:
    """The processes in run order (round after round, so that the rounds finished when a time budget runs
    out are the first ones; within a round the three groups interleaved, a process of each in turn, the
    order rotating with the repetition) and each group's JSON files."""
    groups: dict = {}
    processes = []
    inject = f"--opbench_inject_slowdown={args.slowdown:g}"
    for i in range(args.rounds):
        for j in range(args.repetitions):
            for k in range(len(KINDS)):
                kind = KINDS[(j + k) % len(KINDS)]
                name = f"{kind}{i}"
                out = os.path.join(out_dir, f"{name}-{j}.json")
                groups.setdefault(name, []).append(out)
                extra = args.bench_arg + ([inject] if kind == "S" else [])
                processes.append(Process(f"{name} rep {j + 1}/{args.repetitions}",
                                         benchmark_command(args.binary, args.filter, out, extra), out,
                                         os.path.join(out_dir, f"{name}-{j}.log")))
    return processes, groups


def merged(groups: dict, out_dir: str) -> dict:
    """Merged JSON of every group whose processes all finished."""
    paths = {}
    for name, files in groups.items():
        if all(os.path.exists(f) for f in files):
            paths[name] = os.path.join(out_dir, f"{name}.json")
            merge_runs(files, paths[name])
    return paths


def complete_rounds(paths: dict, rounds: int) -> int:
    """Rounds i whose groups Bi, Ci and Si all finished, counted from the first."""
    done = 0
    while done < rounds and all(f"{kind}{done}" in paths for kind in KINDS):
        done += 1
    return done


def gate_round(policy, base: str, new: str) -> tuple:
    """(gate fails?, {case: CaseResult}) of the gate's comparison of two merged groups."""
    out = Outcome()
    comp = check_runs(base, new, policy, out)
    return any(f.failing for f in out.findings), {c.name: c for c in comp.cases}


def quantile(values: list, q: float) -> float:
    s = sorted(values)
    at = q * (len(s) - 1)
    lo = int(math.floor(at))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (at - lo) * (s[hi] - s[lo])


def evaluate(policy, paths: dict, rounds: int) -> dict:
    aa = [gate_round(policy, paths[f"B{i}"], paths[f"C{i}"]) for i in range(rounds)]
    det = [gate_round(policy, paths[f"B{i}"], paths[f"S{i}"]) for i in range(rounds)]
    cases = {}
    for name in aa[0][1]:
        aa_cases = [r[1][name] for r in aa if name in r[1]]
        det_cases = [r[1][name] for r in det if name in r[1]]
        needed = [max(c.threshold, NOISE_Z * (c.stderr or 0)) - (c.change or 0) for c in aa_cases]
        cases[name] = {
            "aa_rounds": len(aa_cases),
            "aa_slower": sum(c.verdict == "SLOWER" for c in aa_cases),
            "aa_faster": sum(c.verdict == "FASTER" for c in aa_cases),
            "aa_changes_pct": [100 * (c.change or 0) for c in aa_cases],
            "detection_rounds": len(det_cases),
            "caught": sum(c.verdict == "SLOWER" for c in det_cases),
            "injected_changes_pct": [100 * (c.change or 0) for c in det_cases],
            "smallest_reliable_slowdown_pct": 100 * quantile(needed, RELIABLE) if needed else None,
            "threshold_pct": 100 * aa_cases[0].threshold if aa_cases else None,
        }
    return {"aa_rounds_failed": sum(failed for failed, _ in aa), "detection_rounds_failed": sum(f for f, _ in det),
            "cases": cases}


def report(result: dict, args, wall_s: float) -> list:
    r = args.rounds
    planned = "" if result["rounds_planned"] == r else f" (of {result['rounds_planned']} planned: time budget)"
    lines = [f"gate self-test: {args.binary}, filter {args.filter!r}, {r} rounds{planned} x {args.repetitions} repetitions "
             f"per side, injected slowdown {args.slowdown:g}%, policy {result['policy']}, {wall_s:.0f} s",
             f"A/A (the same binary against itself): the gate failed in {result['aa_rounds_failed']} of {r} rounds",
             f"injected {args.slowdown:g}%: the gate failed in {result['detection_rounds_failed']} of {r} rounds", "",
             f"{'case':48s} {'A/A false alarms':>16s} {'caught':>8s} {'injected (median)':>18s} "
             f"{'smallest reliable':>18s}"]
    for name, c in result["cases"].items():
        inj = quantile(c["injected_changes_pct"], 0.5) if c["injected_changes_pct"] else float("nan")
        small = c["smallest_reliable_slowdown_pct"]
        lines.append(f"{name:48s} {c['aa_slower']:>9d} of {c['aa_rounds']:<3d} {c['caught']:>3d} of {c['detection_rounds']:<3d}"
                     f" {inj:>+16.1f}% {'-' if small is None else f'{small:.1f}%':>18s}")
    lines += ["", "caught: rounds whose gate called the slowed case a regression; injected: the change the gate "
              "measured; smallest reliable: the slowdown caught in 95% of the A/A rounds' noise (docstring)"]
    return lines


def parse_args(argv: list) -> argparse.Namespace:
    p = cli.Parser(prog="opbench-gate-selftest", description=__doc__.split(": ", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the bench_ops to test the gate with")
    p.add_argument("--filter", required=True, help="--benchmark_filter of the cases (a few; every one is slowed)")
    p.add_argument("--rounds", type=int, default=20, help="A/A rounds and detection rounds (default 20)")
    p.add_argument("--repetitions", type=int, help="processes per side and round (default: the policy's min_repetitions)")
    p.add_argument("--slowdown", type=float, default=5.0, metavar="PCT", help="injected slowdown, percent (default 5)")
    p.add_argument("--policy", metavar="FILE", help="gate policy (default: the packaged perf-policy.json)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes started at a time (opbench-compare --jobs)")
    p.add_argument("--out-dir", help="folder for every run's JSON and log (default: a new temporary folder)")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--time-budget", type=float, metavar="S", help="start no process after S seconds; evaluate the "
                   "rounds that finished")
    p.add_argument("--bench-arg", action="append", default=[], metavar="ARGS", help="extra bench_ops arguments")
    args = p.parse_args(argv)
    if not (1 <= args.rounds <= 1000 and 1 <= args.jobs <= 1024 and 0 < args.slowdown <= 1000
            and 2 <= (args.repetitions or 2) <= 1000 and (args.time_budget is None or 0 < args.time_budget < math.inf)):
        p.error("need 1 <= rounds <= 1000, 1 <= jobs <= 1024, 0 < slowdown <= 1000, 2 <= repetitions <= 1000, "
                "time budget > 0")
    return args


def main(argv: list | None = None) -> int:
    return cli.run("opbench-gate-selftest", _main, argv)


def _main(argv: list | None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    planned = args.rounds
    try:
        policy = load_policy(args.policy)
        args.repetitions = args.repetitions or policy.min_repetitions
        if args.repetitions < policy.min_repetitions:
            raise InputError(f"--repetitions {args.repetitions} is below the policy's min_repetitions "
                             f"({policy.min_repetitions}): the gate would refuse every round")
        if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
            raise InputError(f"--binary {args.binary}: no such program (build it: scripts/build.sh)")
        cli.check_outputs({"--binary": args.binary, "--policy": args.policy}, {"--json": args.json})
        out_dir = args.out_dir or tempfile.mkdtemp(prefix="opbench-gate-selftest-")
        os.makedirs(out_dir, exist_ok=True)
        processes, groups = plan(args, out_dir)
        print(f"[selftest] {len(processes)} processes, runs in {out_dir}", file=sys.stderr)
        start = time.monotonic()
        run_processes(processes, args.jobs, os.path.join(out_dir, "gpu.lock"), args.time_budget)
        wall_s = time.monotonic() - start
        paths = merged(groups, out_dir)
        done = complete_rounds(paths, args.rounds)
        if done == 0:
            raise InputError(f"no round finished within --time-budget {args.time_budget:g} s")
        if done < args.rounds:
            print(f"[selftest] the time budget ended the runs: {done} of {args.rounds} rounds finished and are "
                  "evaluated", file=sys.stderr)
            args.rounds = done
        result = evaluate(policy, paths, args.rounds)
    except InputError as e:
        print(f"opbench-gate-selftest: {e}", file=sys.stderr)
        return 2
    result.update(policy=policy.path, rounds=args.rounds, rounds_planned=planned, repetitions=args.repetitions,
                  slowdown_pct=args.slowdown,
                  filter=args.filter, binary=args.binary, jobs=args.jobs, wall_s=wall_s)
    print("\n".join(report(result, args, wall_s)))
    if args.json:
        cli.write_atomically(args.json, json.dumps(result, indent=1))
    reliable = all(c["caught"] >= RELIABLE * c["detection_rounds"] for c in result["cases"].values())
    return 0 if result["aa_rounds_failed"] == 0 and reliable else 1


if __name__ == "__main__":
    sys.exit(main())
