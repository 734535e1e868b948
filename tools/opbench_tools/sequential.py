"""Sequential testing for opbench-compare --binaries and opbench-gate-selftest: measure, judge, and add
repetitions only where the judgement is still open.

Groups of processes (one per side) run interleaved (benchmark_processes.interleaved). After `first`
processes a group, `judge` names the cases still unresolved (resolve.unresolved: too noisy for the
threshold, or a slowdown the test cannot confirm yet); those cases get `batch` more processes in every
group, run with a filter that selects just them, until every case is resolved or a group holds `most`
processes. Every group gets the same processes, so the i-th repetitions of a case still ran side by
side and a paired comparison stays paired.

Stopping once the data look resolved is optional stopping: a test repeated on growing data crosses its
line more often than a single test of fixed size. The gate's rule keeps the effect small (a change must
exceed the threshold and 4.5 standard errors, not only reach p < alpha), and opbench-gate-selftest runs
its A/A rounds through this same procedure, so the false-alarm rate it prints includes the effect.
"""
from __future__ import annotations

import os
import sys
import time

from opbench_tools.benchmark_json import merge_runs
from opbench_tools.benchmark_processes import cases_filter, interleaved, run_processes


def merged(groups: list, out_dir: str) -> dict:
    """{group name: merged JSON} of the groups whose processes all wrote their JSON."""
    paths = {}
    for group in groups:
        if group.files and all(os.path.exists(f) for f in group.files):
            paths[group.name] = os.path.join(out_dir, f"{group.name}.json")
            merge_runs(group.files, paths[group.name])
    return paths


def run_until_resolved(groups: list, judge, plan: dict, out_dir: str, budget_s: float | None = None) -> dict:
    """Runs the groups and returns {group name: merged JSON} (only complete groups when the time budget
    ran out). plan: filter, first, most, batch, jobs, rotate. judge({name: JSON}) -> unresolved cases."""
    start = time.monotonic()

    def run(regex: str, count: int) -> None:
        left = None if budget_s is None else max(budget_s - (time.monotonic() - start), 0.0)
        processes = interleaved(groups, regex, count, out_dir, plan["rotate"])
        run_processes(processes, plan["jobs"], os.path.join(out_dir, "gpu.lock"), left)

    run(plan["filter"], plan["first"])
    paths = merged(groups, out_dir)
    while len(paths) == len(groups) and len(groups[0].files) < plan["most"]:
        open_cases = judge(paths)
        if not open_cases:
            break
        count = min(plan["batch"], plan["most"] - len(groups[0].files))
        print(f"[sequential] {len(open_cases)} case(s) unresolved after {len(groups[0].files)} processes a side: "
              f"{count} more for {', '.join(sorted(open_cases)[:3])}{' ...' if len(open_cases) > 3 else ''}",
              file=sys.stderr)
        run(cases_filter(open_cases), count)
        paths = merged(groups, out_dir)
    return paths
