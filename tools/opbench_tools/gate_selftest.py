"""opbench-gate-selftest: Measures the CI gate on this runner and build: how often it cries wolf (the false-alarm
rate), how often it catches slowdowns of chosen sizes (the detection rate), and the smallest slowdown it
catches per case.

Run it first when adopting opbench-gate. It runs the binary the way CI compares two builds (one process per
repetition, the policy's rule), in rounds. Round i has a group of processes per side:
  base Bi and control Ci           the binary as it is
  slowed Si(PCT), one per --slowdown   the same binary with --opbench_inject_slowdown=PCT (each selected case
                                   timed, then timed again with PCT% of that time added to every iteration)
A round's groups run interleaved, a process of each in turn, the order rotating from one repetition to the
next, so whatever drifts on the machine during the round reaches every side alike and the j-th processes
of the groups ran side by side (the policy's "paired" compares them in pairs). With --max-repetitions the
round is sequential (sequential.py): after --repetitions processes a side, the cases that any of the
round's comparisons cannot resolve get --batch more processes in every group, until all resolve or the
groups hold --max-repetitions. A/A round i gates Bi against Ci: a false alarm is a round the gate FAILs.
Detection round i gates Bi against Si(PCT): a case is caught when the gate calls it a regression.

Printed: the false-alarm rate with its 95% upper bound (Clopper-Pearson), the rounds that ended
INCONCLUSIVE, the detection rate per slowdown, and per case the smallest injected slowdown caught in >= 95%
of rounds and the smallest the A/A noise predicts: the gate needs a change above max(threshold, 4.5 se),
a true slowdown s shifts a round's change c to about c + s, so s must exceed max(threshold, 4.5 se) - c in
95% of rounds (the 95th percentile over the A/A rounds).
With --time-budget S every process ends by S seconds, and a round starts only while the slowest round
finished so far would still end by then (one cut short is lost); the rounds that finished are evaluated
(the output says how many of --rounds that was). With --gpus the rounds run side by side, one at a time
on each named GPU (CUDA_VISIBLE_DEVICES): every group of a round on the same GPU, so its comparisons
stay side by side, and a round's files under OUT/gpu<G>; on a host of 4 GPUs, 4 rounds at once.
With --combine A.json B.json ... it runs nothing: it adds up the rounds of earlier runs' --json files (the
same policy, filter, repetitions and slowdowns; e.g. calls of a device limited to minutes each) and prints
and judges the sum as one run.
Exit status: 0 when no A/A round failed and every case was caught in >= 95% of rounds at every injected
slowdown above its threshold, 1 otherwise, 2 on unusable input. Full description: docs/compare_and_gate.md
("Is the gate trustworthy here?").
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import threading
import time

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError
from opbench_tools.benchmark_processes import Group
from opbench_tools.gate import Outcome, check_runs
from opbench_tools.gate_policy import load_policy
from opbench_tools.gpus import chosen_gpus, visible_gpus
from opbench_tools.json_input import parse_json_file
from opbench_tools.sequential import run_until_resolved
from opbench_tools.stats import NOISE_Z, scipy_stats

RELIABLE = 0.95
DEFAULT_SLOWDOWNS_PCT = (2.0, 5.0)


def caught_reliably(slowdown: dict) -> bool:
    """Whether a case's figures at one slowdown ({"rounds", "caught", ...}) show it caught in >= 95% of rounds."""
    return slowdown["rounds"] > 0 and slowdown["caught"] >= RELIABLE * slowdown["rounds"]


def round_groups(args, i: int, env: dict | None = None) -> list:
    """Round i's groups: base, control, one slowed group per --slowdown (their processes get `env`)."""
    env = env or {}
    groups = [Group(name, args.binary, args.bench_arg, env=env) for name in (f"B{i}", f"C{i}")]
    for pct in args.slowdown:
        groups.append(Group(f"S{pct:g}r{i}", args.binary, args.bench_arg + [f"--opbench_inject_slowdown={pct:g}"],
                            env=env))
    return groups


def gate_round(policy, base: str, new: str) -> dict:
    """The gate's outcome of one comparison: failed, inconclusive, {case: CaseResult}."""
    out = Outcome()
    comp = check_runs(base, new, policy, out)
    return {"failed": out.status() == 1, "inconclusive": bool(out.unresolved()),
            "unresolved": set(out.unresolved()), "cases": {c.name: c for c in comp.cases}}


def comparisons(args, i: int) -> list:
    """(label, base group, other group) of round i: the A/A pair, then each slowed group."""
    return [("A/A", f"B{i}", f"C{i}")] + [(pct, f"B{i}", f"S{pct:g}r{i}") for pct in args.slowdown]


def run_round(args, policy, i: int, out_dir: str, budget_s, env: dict | None = None) -> dict | None:
    """Runs round i (sequentially extended where a case is unresolved); its gate outcomes, or None when the
    time budget ended it before every group finished."""
    groups = round_groups(args, i, env)

    def judge(paths: dict) -> set:
        return set().union(*(gate_round(policy, paths[a], paths[b])["unresolved"] for _, a, b in comparisons(args, i)))
    plan = {"filter": args.filter, "first": args.repetitions, "most": args.max_repetitions or args.repetitions,
            "batch": args.batch, "jobs": args.jobs, "rotate": True}
    paths = run_until_resolved(groups, judge, plan, out_dir, budget_s)
    if len(paths) < len(groups):
        return None
    return {label: gate_round(policy, paths[a], paths[b]) for label, a, b in comparisons(args, i)}


def quantile(values: list, q: float) -> float:
    s = sorted(values)
    at = q * (len(s) - 1)
    lo = int(math.floor(at))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (at - lo) * (s[hi] - s[lo])


def upper_bound(failures: int, rounds: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate seen as failures in rounds."""
    return 1.0 if failures >= rounds else float(scipy_stats().beta.ppf(confidence, failures + 1, rounds - failures))


def evaluate(rounds: list, slowdowns: list) -> dict:
    """Every figure of the finished rounds (each {label: gate_round(...)})."""
    names = list(rounds[0]["A/A"]["cases"])
    cases = {name: case_figures(name, rounds, slowdowns) for name in names}
    aa_failed = sum(r["A/A"]["failed"] for r in rounds)
    return {"rounds": len(rounds), "aa_rounds_failed": aa_failed, "false_alarm_rate": aa_failed / len(rounds),
            "false_alarm_upper_95": upper_bound(aa_failed, len(rounds)),
            "aa_rounds_inconclusive": sum(r["A/A"]["inconclusive"] for r in rounds),
            "detection_rounds_failed": {f"{p:g}": sum(r[p]["failed"] for r in rounds) for p in slowdowns},
            "detection_rounds_inconclusive": {f"{p:g}": sum(r[p]["inconclusive"] for r in rounds) for p in slowdowns},
            "cases": cases}


def case_figures(name: str, rounds: list, slowdowns: list) -> dict:
    aa = [r["A/A"]["cases"][name] for r in rounds if name in r["A/A"]["cases"]]
    needed = [max(c.threshold, NOISE_Z * (c.stderr or 0)) - (c.change or 0) for c in aa]
    per = {}
    for pct in slowdowns:
        slowed = [r[pct]["cases"][name] for r in rounds if name in r[pct]["cases"]]
        per[f"{pct:g}"] = {"rounds": len(slowed), "caught": sum(c.verdict == "SLOWER" for c in slowed),
                           "changes_pct": [100 * (c.change or 0) for c in slowed]}
    caught = [p for p in slowdowns if caught_reliably(per[f"{p:g}"])]
    return {"aa_rounds": len(aa), "aa_slower": sum(c.verdict == "SLOWER" for c in aa),
            "aa_needed_pct": [100 * n for n in needed],
            "aa_faster": sum(c.verdict == "FASTER" for c in aa),
            "aa_unresolved": sum(c.verdict in ("NOISY", "UNSURE") for c in aa),
            "aa_changes_pct": [100 * (c.change or 0) for c in aa],
            "repetitions": [min(c.old.n, c.new.n) for c in aa if c.old and c.new],
            "threshold_pct": 100 * aa[0].threshold if aa else None, "slowdowns": per,
            "smallest_caught_pct": min(caught) if caught else None,
            "smallest_reliable_slowdown_pct": 100 * quantile(needed, RELIABLE) if needed else None}


def report(result: dict) -> list:
    r, slow = result["rounds"], result["slowdowns_pct"]
    planned = "" if result["rounds_planned"] == r else f" (of {result['rounds_planned']} planned: time budget)"
    most, batch = result["max_repetitions"] or 0, result.get("batch")
    steps = (f", sequential up to {most}" + (f" (+{batch} a step)" if batch else "")
             if most > result["repetitions"] else "")
    lines = [f"gate self-test: {result['binary']}, filter {result['filter']!r}, {r} rounds{planned} x "
             f"{result['repetitions']} processes a side{steps}, injected {', '.join(f'{p:g}%' for p in slow)}, "
             f"policy {result['policy']}{' (paired)' if result['paired'] else ''}"
             f"{', rounds side by side on GPUs ' + ','.join(result['gpus']) if result['gpus'] else ''}, "
             f"{result['wall_s']:.0f} s"]
    if "combined_from" in result:
        lines.append(f"combined from {len(result['combined_from'])} runs: " +
                     ", ".join(f"{path} ({n} rounds)" for path, n in result["combined_from"]))
    lines += [f"false alarms: the gate failed {result['aa_rounds_failed']} of {r} A/A rounds = "
              f"{100 * result['false_alarm_rate']:.0f}% (95% upper bound {100 * result['false_alarm_upper_95']:.1f}%); "
              f"{result['aa_rounds_inconclusive']} ended INCONCLUSIVE"]
    for p in slow:
        failed = result["detection_rounds_failed"][f"{p:g}"]
        lines.append(f"detection at {p:g}%: the gate failed {failed} of {r} rounds = {100 * failed / r:.0f}%; "
                     f"{result['detection_rounds_inconclusive'][f'{p:g}']} ended INCONCLUSIVE")
    lines += ["", f"{'case':40s} {'false alarms':>12s}" + "".join(f" {'caught ' + format(p, 'g') + '%':>12s}" for p in slow)
              + f" {'smallest caught':>15s} {'(noise)':>8s} {'reps':>5s}"]
    for name, c in result["cases"].items():
        caught = "".join(f" {c['slowdowns'][f'{p:g}']['caught']:>6d} of {c['slowdowns'][f'{p:g}']['rounds']:<3d}"
                         for p in slow)
        small, noise = c["smallest_caught_pct"], c["smallest_reliable_slowdown_pct"]
        reps = quantile(c["repetitions"], 0.5) if c["repetitions"] else 0
        lines.append(f"{name:40s} {c['aa_slower']:>5d} of {c['aa_rounds']:<3d}{caught} "
                     f"{'-' if small is None else f'{small:g}%':>15s} {'-' if noise is None else f'{noise:.1f}%':>8s} "
                     f"{reps:>5.0f}")
    lines += ["", "caught: rounds whose gate called the slowed case a regression; smallest caught: the smallest "
              "injected slowdown caught in >= 95% of rounds; (noise): the one the A/A rounds' noise predicts; "
              "reps: processes a side (median over rounds)"]
    return lines


def parse_args(argv: list) -> argparse.Namespace:
    p = cli.Parser(prog="opbench-gate-selftest", description=__doc__.split(": ", 1)[1],
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", help="the bench_ops to test the gate with (required unless --combine)")
    p.add_argument("--filter", help="--benchmark_filter of the cases (a few; every one is slowed; required unless "
                   "--combine)")
    p.add_argument("--combine", nargs="+", metavar="JSON", help="run nothing: add up the rounds of these earlier "
                   "--json files (same policy, filter, repetitions and slowdowns) and judge them as one run")
    p.add_argument("--rounds", type=int, default=20, help="A/A rounds and detection rounds (default 20)")
    p.add_argument("--repetitions", type=int, help="processes per side and round (default: the policy's min_repetitions)")
    p.add_argument("--max-repetitions", type=int, metavar="N", help="sequential: add processes to unresolved "
                   "cases up to N a side (default: none added)")
    p.add_argument("--batch", type=int, default=4, metavar="K", help="processes a side added per step (default 4)")
    p.add_argument("--slowdown", type=float, action="append", metavar="PCT",
                   help="injected slowdown, percent; repeat for several (default 2 and 5)")
    p.add_argument("--policy", metavar="FILE", help="gate policy (default: the packaged perf-policy.json)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes started at a time (opbench-compare --jobs)")
    p.add_argument("--gpus", metavar="LIST", help="run rounds side by side, one at a time on each of these GPUs "
                   "(comma-separated indices or UUIDs, e.g. 0,1,2,3; default: one round at a time, on the GPU the "
                   "environment gives)")
    p.add_argument("--out-dir", help="folder for every run's JSON and log (default: a new temporary folder)")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--time-budget", type=float, metavar="S", help="end every process by S seconds and start a "
                   "round only while the slowest finished one would still fit; evaluate the rounds that finished")
    p.add_argument("--bench-arg", action="append", default=[], metavar="ARGS", help="extra bench_ops arguments")
    args = p.parse_args(argv)
    if not args.combine and (args.binary is None or args.filter is None):
        p.error("--binary and --filter are required (unless --combine)")
    args.slowdown = sorted(set(args.slowdown or DEFAULT_SLOWDOWNS_PCT))
    reps = args.repetitions or 2
    if not (1 <= args.rounds <= 1000 and 1 <= args.jobs <= 1024 and all(0 < s <= 1000 for s in args.slowdown)
            and len(args.slowdown) <= 8 and 2 <= reps <= 1000 and reps <= (args.max_repetitions or reps) <= 1000
            and 1 <= args.batch <= 1000 and (args.time_budget is None or 0 < args.time_budget < math.inf)):
        p.error("need 1 <= rounds <= 1000, 1 <= jobs <= 1024, 0 < slowdown <= 1000 (at most 8), 2 <= repetitions "
                "<= max-repetitions <= 1000, 1 <= batch <= 1000, time budget > 0")
    return args


def main(argv: list | None = None) -> int:
    return cli.run("opbench-gate-selftest", _main, argv)


def check_inputs(args, policy) -> None:
    args.repetitions = args.repetitions or policy.min_repetitions
    if args.repetitions < policy.min_repetitions:
        raise InputError(f"--repetitions {args.repetitions} is below the policy's min_repetitions "
                         f"({policy.min_repetitions}): the gate would refuse every round")
    if args.max_repetitions is not None and args.max_repetitions < args.repetitions:
        raise InputError(f"--max-repetitions {args.max_repetitions} is below --repetitions {args.repetitions}")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        raise InputError(f"--binary {args.binary}: no such program (build it: scripts/build.sh)")
    if args.gpus is not None:
        try:
            args.gpus = chosen_gpus(args.gpus, visible_gpus())
        except ValueError as e:
            raise InputError(str(e)) from None
    cli.check_outputs({"--binary": args.binary, "--policy": args.policy}, {"--json": args.json})


def round_fits(left_s: float | None, finished_round_s: list) -> bool:
    """Whether a round may start with left_s seconds of the budget left (None: no budget): while the
    slowest round finished so far would end in time (before any finished, while any time is left)."""
    return left_s is None or left_s > max(finished_round_s, default=0.0)


def run_rounds(args, policy, out_dir: str) -> list:
    """The finished rounds' outcomes, in round order: one round at a time, or with --gpus one at a time on each GPU."""
    start, outcomes, lock = time.monotonic(), {}, threading.Lock()
    state = {"next": 0, "stopped": False, "error": None, "round_s": []}

    def work(env: dict | None, folder: str) -> None:
        while True:
            with lock:
                i = state["next"]
                left = None if args.time_budget is None else args.time_budget - (time.monotonic() - start)
                if state["stopped"] or i >= args.rounds or not round_fits(left, state["round_s"]):
                    return
                state["next"] += 1
            began = time.monotonic()
            try:
                outcome = run_round(args, policy, i, folder, left, env)
            except InputError as e:
                with lock:
                    state["stopped"], state["error"] = True, state["error"] or e
                return
            with lock:
                if outcome is None:
                    state["stopped"] = True
                    return
                outcomes[i] = outcome
                state["round_s"].append(time.monotonic() - began)

    if not args.gpus:
        work(None, out_dir)
    else:
        workers = []
        for gpu in args.gpus:
            folder = os.path.join(out_dir, f"gpu{gpu}")
            os.makedirs(folder, exist_ok=True)
            env = {"CUDA_VISIBLE_DEVICES": gpu, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
            workers.append(threading.Thread(target=work, args=(env, folder), daemon=True))
            workers[-1].start()
        for worker in workers:
            worker.join()
    if state["error"] is not None:
        raise state["error"]
    rounds = [outcomes[i] for i in sorted(outcomes)]
    if not rounds:
        raise InputError(f"no round finished within --time-budget {args.time_budget:g} s")
    if len(rounds) < args.rounds:
        print(f"[selftest] the time budget ended the runs: {len(rounds)} of {args.rounds} rounds finished and are "
              "evaluated", file=sys.stderr)
    return rounds


SAME_IN_EVERY_PART = ("paired", "filter", "repetitions", "max_repetitions", "slowdowns_pct")


def load_part(path: str) -> dict:
    part = parse_json_file(path)
    keys = SAME_IN_EVERY_PART + ("policy", "rounds", "cases", "aa_rounds_failed", "detection_rounds_failed")
    if not isinstance(part, dict) or any(k not in part for k in keys) or not part["rounds"]:
        raise InputError(f"--combine {path}: not the --json of a gate self-test (needs {', '.join(keys)})")
    return part


def combined(paths: list) -> dict:
    """The sum of earlier runs' results (their --json): counts added, per-round lists joined, rates and the
    smallest slowdowns judged again. The noise-predicted smallest slowdown is recomputed from every A/A
    round where each part kept its rounds' figures (aa_needed_pct), else it is the largest of the parts'."""
    parts = [load_part(path) for path in paths]
    first = parts[0]
    # The policy by its content where every part recorded it, else by its path.
    policy = ("policy_sha256",) if all("policy_sha256" in part for part in parts) else ("policy",)
    for path, part in zip(paths[1:], parts[1:]):
        for key in SAME_IN_EVERY_PART + policy + ("cases",):
            mine, theirs = part.get(key), first.get(key)
            if key == "cases":
                mine, theirs = sorted(mine or {}), sorted(theirs or {})
            if mine != theirs:
                raise InputError(f"--combine: {path} has {key} {mine!r}, {paths[0]} {theirs!r}: not one experiment")
    total = dict(first)
    for key in ("rounds", "aa_rounds_failed", "aa_rounds_inconclusive", "rounds_planned", "wall_s"):
        total[key] = sum(part[key] for part in parts)
    for key in ("detection_rounds_failed", "detection_rounds_inconclusive"):
        total[key] = {p: sum(part[key][p] for part in parts) for p in first[key]}
    total["false_alarm_rate"] = total["aa_rounds_failed"] / total["rounds"]
    total["false_alarm_upper_95"] = upper_bound(total["aa_rounds_failed"], total["rounds"])
    total["gpus"] = sorted({g for part in parts for g in part.get("gpus") or []}) or None
    total["batch"] = first.get("batch") if all(part.get("batch") == first.get("batch") for part in parts) else None
    total["cases"] = {name: combined_case([part["cases"][name] for part in parts]) for name in first["cases"]}
    total["combined_from"] = [(path, part["rounds"]) for path, part in zip(paths, parts)]
    return total


def combined_case(parts: list) -> dict:
    case = dict(parts[0])
    for key in ("aa_rounds", "aa_slower", "aa_faster", "aa_unresolved"):
        case[key] = sum(c[key] for c in parts)
    for key in ("aa_changes_pct", "repetitions"):
        case[key] = [v for c in parts for v in c[key]]
    case["slowdowns"] = {p: {"rounds": sum(c["slowdowns"][p]["rounds"] for c in parts),
                             "caught": sum(c["slowdowns"][p]["caught"] for c in parts),
                             "changes_pct": [v for c in parts for v in c["slowdowns"][p]["changes_pct"]]}
                         for p in parts[0]["slowdowns"]}
    caught = [float(p) for p, d in case["slowdowns"].items() if caught_reliably(d)]
    case["smallest_caught_pct"] = min(caught) if caught else None
    if all("aa_needed_pct" in c for c in parts):
        case["aa_needed_pct"] = [v for c in parts for v in c["aa_needed_pct"]]
        needed = case["aa_needed_pct"]
        case["smallest_reliable_slowdown_pct"] = quantile(needed, RELIABLE) if needed else None
    else:
        known = [c["smallest_reliable_slowdown_pct"] for c in parts if c["smallest_reliable_slowdown_pct"] is not None]
        case.pop("aa_needed_pct", None)
        case["smallest_reliable_slowdown_pct"] = max(known) if known else None
    return case


def verdict(result: dict) -> int:
    """0 when no A/A round failed and every case was caught in >= 95% of rounds at each slowdown above its
    threshold, else 1."""
    required = [(c, f"{p:g}") for c in result["cases"].values() for p in result["slowdowns_pct"]
                if p > c["threshold_pct"]]
    reliable = all(caught_reliably(c["slowdowns"][p]) for c, p in required)
    return 0 if result["aa_rounds_failed"] == 0 and reliable else 1


def _main(argv: list | None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.combine:
        try:
            cli.check_outputs({f"--combine {path}": path for path in args.combine}, {"--json": args.json})
            result = combined(args.combine)
        except InputError as e:
            print(f"opbench-gate-selftest: {e}", file=sys.stderr)
            return cli.UNUSABLE
        return finish(result, args.json)
    try:
        policy = load_policy(args.policy)
        check_inputs(args, policy)
        out_dir = args.out_dir or tempfile.mkdtemp(prefix="opbench-gate-selftest-")
        os.makedirs(out_dir, exist_ok=True)
        print(f"[selftest] {args.rounds} rounds of {2 + len(args.slowdown)} groups, runs in {out_dir}", file=sys.stderr)
        start = time.monotonic()
        rounds = run_rounds(args, policy, out_dir)
        result = evaluate(rounds, args.slowdown)
    except InputError as e:
        print(f"opbench-gate-selftest: {e}", file=sys.stderr)
        return cli.UNUSABLE
    with open(policy.path, "rb") as f:
        policy_sha256 = hashlib.sha256(f.read()).hexdigest()
    result.update(policy=policy.path, policy_sha256=policy_sha256, paired=policy.paired, rounds_planned=args.rounds,
                  repetitions=args.repetitions, max_repetitions=args.max_repetitions, batch=args.batch,
                  slowdowns_pct=args.slowdown, filter=args.filter, binary=args.binary, jobs=args.jobs, gpus=args.gpus,
                  wall_s=time.monotonic() - start)
    return finish(result, args.json)


def finish(result: dict, json_path: str | None) -> int:
    print("\n".join(report(result)))
    if json_path:
        cli.write_atomically(json_path, json.dumps(result, indent=1))
    return verdict(result)


if __name__ == "__main__":
    sys.exit(main())
