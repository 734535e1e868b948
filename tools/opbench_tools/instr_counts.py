"""opbench-instr: instruction counts of small LibTorch statements (bench_instr under callgrind).

  run   the whole set (or --filter): one worker process per definition in a pool of --jobs (default:
        the machine's cores), each under valgrind --tool=callgrind, plus a short native run of the same
        definition for wall time; a progress line with ETA; a per-worker timeout with retries; results
        as Google-Benchmark-shaped JSON (--out) that opbench-compare / opbench-gate read with
        --metric instructions.
        Each pool slot keeps a `bench_instr --serve` fork server under callgrind (and one native): LibTorch
        loads once per slot, and every definition runs in a child forked from the same state.
  list  the definitions (bench_instr --list).
  diff  two results files: relative difference of every count; exit 1 above --tolerance-pct (the
        determinism check: two runs of one build agree within 0.1%).

Per benchmark "Instr/<group>/<label>/<variant>/t<threads>": instructions = the median over repeats of
(statement loop - empty loop) / iterations, counted on the calling thread; real_time = native wall ns
per call (secondary, noisy on shared machines). docs/instruction_counts.md has the details.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from opbench_tools import cli
from opbench_tools.cli import write_atomically
from opbench_tools.benchmark_json import InputError, finite_number, read_json
from opbench_tools.build_dir import binary, checkout
from opbench_tools.instr_pool import NAME_PREFIX, Job, Progress, default_jobs, list_definitions, run_pool
from opbench_tools.instr_server import WORKER_ENV

SUITE = "instruction_counts"
BUILD_DIR_HELP = ("where bench_instr is (default: $OPBENCH_BUILD_DIR, else build/ of the package's checkout or of "
                  "the checkout you are in, else ./build)")


def bench_instr_path(build_dir: str | None) -> Path:
    """bench_instr in the build folder; MissingBinary (one line, exit 2) naming where it looked."""
    return binary("bench_instr", build_dir)


def tool_version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def selected_definitions(args, exe: Path) -> list[dict] | str:
    """The definitions --filter selects, or the one-line reason the selection is unusable."""
    defs = list_definitions(exe)
    if args.filter:
        pattern = re.compile(args.filter)
        defs = [d for d in defs if pattern.search(f"{d['group']}/{d['label']}")]
    if not defs:
        return "no definition matches the filter"
    if args.extra_work and not any(d["label"] == args.extra_work for d in defs):
        return f"--extra-work {args.extra_work}: no such definition in the set"
    return defs


def check_run_args(args) -> None:
    """InputError naming the first option of `run` whose value cannot work."""
    checks = (("--jobs", args.jobs >= 0, "a count >= 0 (0: the cores)"),
              ("--iters", args.iters >= 0, "a count >= 0 (0: per definition)"),
              ("--repeats", 1 <= args.repeats <= 1000, "a count from 1 to 1000"),
              ("--timeout", 0 < args.timeout < math.inf, "a positive number of seconds"),
              ("--retries", 0 <= args.retries <= 100, "a count from 0 to 100"),
              ("--warn-spread-pct", 0 <= args.warn_spread_pct < math.inf, "a number >= 0"),
              ("--threads", re.fullmatch(r"[1-9][0-9]{0,3}(,[1-9][0-9]{0,3})*", args.threads) is not None,
               "thread counts from 1 to 9999, comma-separated"))
    for flag, ok, expected in checks:
        if not ok:
            raise InputError(f"{flag} {getattr(args, flag[2:].replace('-', '_'))}: expected {expected}")
    if args.out and (os.path.isdir(args.out) or args.out.endswith(os.sep)):
        raise InputError(f"--out {args.out}: a folder; name the results file")
    if args.filter:
        try:
            re.compile(args.filter)
        except re.error as e:
            raise InputError(f"--filter {args.filter!r}: not a regular expression: {e}") from None


def cmd_run(args) -> int:
    check_run_args(args)
    bad_env = [kv for kv in args.env if "=" not in kv or kv.startswith("=")]
    if bad_env:
        print(f"opbench-instr: --env needs KEY=VALUE, got {bad_env}", file=sys.stderr)
        return 2
    valgrind = shutil.which(args.valgrind)
    if valgrind is None:
        print(f"opbench-instr: {args.valgrind} not found (scripts/setup.sh installs valgrind)", file=sys.stderr)
        return 2
    args.valgrind = valgrind
    exe = bench_instr_path(args.build_dir)
    defs = selected_definitions(args, exe)
    if isinstance(defs, str):
        print(f"opbench-instr: {defs}", file=sys.stderr)
        return 2
    jobs = [Job(d["label"], d["group"], d["stmt"], d["variants"]) for d in defs]
    n_jobs = max(1, min(args.jobs or default_jobs(), len(jobs)))
    print(f"[instr] {len(jobs)} definitions, threads {args.threads}, {args.repeats} repeats, "
          f"{n_jobs} workers ({exe})", file=sys.stderr)
    env = dict(WORKER_ENV, **dict(kv.split("=", 1) for kv in args.env))
    wall_s = run_pool(jobs, exe, args, env, n_jobs)
    return write_results(jobs, exe, args, n_jobs, wall_s)


def write_results(jobs: list[Job], exe: Path, args, n_jobs: int, wall_s: float) -> int:
    """Writes the results document (--out, else stdout), reports on stderr; exit 1 when a definition failed."""
    failed = [j for j in jobs if j.error]
    benchmarks = [e for j in jobs for e in j.entries]
    for j in failed:
        benchmarks.append({"name": f"{NAME_PREFIX}/{j.group}/{j.label}", "run_name":
                           f"{NAME_PREFIX}/{j.group}/{j.label}", "run_type": "iteration",
                           "error_occurred": True, "error_message": j.error.splitlines()[0]})
    context = run_context(jobs, failed, exe, args, n_jobs, wall_s)
    text = dump_results({"context": context, "benchmarks": benchmarks})
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.out, text)
    else:
        sys.stdout.write(text)
    n_ok = len(benchmarks) - len(failed)
    print(f"[instr] {n_ok} results from {len(jobs) - len(failed)}/{len(jobs)} definitions in "
          f"{Progress.fmt(wall_s)}" + (f" -> {args.out}" if args.out else ""), file=sys.stderr)
    wide = [e for e in benchmarks if e.get("spread_pct", 0) > args.warn_spread_pct]
    if wide:
        print(f"[instr] note: {len(wide)} results whose repeats differ by more than "
              f"{args.warn_spread_pct}% (heap state; the median is reported): "
              + ", ".join(e["name"] for e in wide[:8]) + (" ..." if len(wide) > 8 else ""),
              file=sys.stderr)
    if failed:
        print(f"[instr] {len(failed)} definition(s) FAILED after {args.retries + 1} attempt(s):",
              file=sys.stderr)
        for j in failed:
            print(f"--- {j.group}/{j.label}:\n{j.error}", file=sys.stderr)
        return 1
    return 0


def run_context(jobs: list[Job], failed: list[Job], exe: Path, args, n_jobs: int, wall_s: float) -> dict:
    """The results' context: the machine, the tools' versions, the settings, the failures."""
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": str(exe),
        "num_cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "library_build_type": "release",
        "opbench_suite": SUITE,
        "torch_version": next((j.torch_version for j in jobs if j.torch_version), "unknown"),
        "valgrind_version": tool_version([args.valgrind, "--version"]),
        "git_sha": tool_version(["git", "-C", str(checkout() or exe.parent), "rev-parse", "--short=12", "HEAD"]),
        "threads": args.threads,
        "repeats": args.repeats,
        "iterations": args.iters or "per definition",
        "extra_work": args.extra_work or None,
        "worker_env": dict(WORKER_ENV, **dict(kv.split("=", 1) for kv in args.env)),
        "jobs": n_jobs,
        "wall_s": round(wall_s, 1),
        "definitions": len(jobs),
        "failures": [{"label": j.label, "attempts": j.attempts, "error": j.error} for j in failed],
        "counting": "callgrind Ir of the calling thread, (statement loop - empty loop) / iterations, "
                    "median of repeats; real_time: native wall ns per call",
    }


def dump_results(doc: dict) -> str:
    """The results JSON: the context indented, one line per benchmark (small, diff-friendly)."""
    rows = ",\n".join("  " + json.dumps(b) for b in doc["benchmarks"])
    context = json.dumps(doc["context"], indent=1).replace("\n", "\n ")
    return f'{{\n "context": {context},\n "benchmarks": [\n{rows}\n ]\n}}\n'


# ---------------------------------------------------------------- diff
def load_counts(path: str) -> dict[str, float]:
    """{name: instructions} of a results file's successful entries; InputError naming the file and entry."""
    counts = {}
    for i, b in enumerate(read_json(path)["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise InputError(f"{path}: benchmarks[{i}]: expected an object with a string 'name'")
        if "instructions" not in b or b.get("error_occurred"):
            continue
        value = finite_number(b["instructions"])
        if value is None:
            raise InputError(f"{path}: benchmarks[{i}] ({b['name']!r}): instructions is not a finite number")
        counts[b["name"]] = value
    return counts


def diff_counts(a: dict[str, float], b: dict[str, float]) -> tuple[list, list, list]:
    """(rows (name, a, b, relative change b/a - 1), names only in a, names only in b)."""
    rows = [(n, a[n], b[n], (b[n] / a[n] - 1) if a[n] else (0.0 if b[n] == a[n] else float("inf")))
            for n in a if n in b]
    return rows, [n for n in a if n not in b], [n for n in b if n not in a]


def cmd_diff(args) -> int:
    if not (0 <= args.tolerance_pct < math.inf and args.top >= 0):
        raise InputError("--tolerance-pct needs a number >= 0 and --top a count >= 0")
    a, b = load_counts(args.a), load_counts(args.b)
    rows, only_a, only_b = diff_counts(a, b)
    if not rows:
        print("opbench-instr diff: no benchmark names in common", file=sys.stderr)
        return 2
    tol = args.tolerance_pct / 100
    rows.sort(key=lambda r: -abs(r[3]))
    worst = rows[0]
    over = [r for r in rows if abs(r[3]) > tol]
    shown = over if not args.all else rows
    for name, x, y, rel in shown[: args.top if not args.all else None]:
        print(f"{rel * 100:+9.3f}%  {x:14.1f} -> {y:14.1f}  {name}")
    print(f"{len(rows)} counts compared; max |difference| {abs(worst[3]) * 100:.4f}% ({worst[0]}); "
          f"{len(over)} above {args.tolerance_pct}%"
          + (f"; only in {args.a}: {len(only_a)}" if only_a else "")
          + (f"; only in {args.b}: {len(only_b)}" if only_b else ""))
    return 1 if over or only_a or only_b else 0


def cmd_list(args) -> int:
    for d in list_definitions(bench_instr_path(args.build_dir)):
        print(f"{d['group']}/{d['label']:24s} {','.join(d['variants']):11s} iters {d['iters']:4d}  {d['stmt']}")
    return 0


def main(argv: list | None = None) -> int:
    return cli.run("opbench-instr", _main, argv)


def _main(argv: list | None) -> int:
    p = cli.Parser(prog="opbench-instr", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure the set: a worker pool of callgrind processes")
    r.add_argument("--build-dir", help=BUILD_DIR_HELP)
    r.add_argument("--out", help="results JSON (default: stdout)")
    r.add_argument("--jobs", type=int, default=0, help="worker processes (default: the cores)")
    r.add_argument("--filter", help="regex on <group>/<label>")
    r.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    r.add_argument("--iters", type=int, default=0, help="iterations per repeat (default: per definition)")
    r.add_argument("--repeats", type=int, default=3, help="counted repeats per result (default 3)")
    r.add_argument("--timeout", type=float, default=600, help="seconds per worker process (default 600)")
    r.add_argument("--retries", type=int, default=1, help="retries of a failed worker (default 1)")
    r.add_argument("--extra-work", metavar="LABEL",
                   help="A/B: this definition's statement runs twice per iteration")
    r.add_argument("--no-wall", action="store_true", help="skip the native wall-time runs")
    r.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="add to the workers' fixed environment (repeatable; recorded in the context)")
    r.add_argument("--valgrind", default="valgrind")
    r.add_argument("--warn-spread-pct", type=float, default=1.0,
                   help="note results whose repeats differ by more than this (default 1%%)")
    r.set_defaults(func=cmd_run)
    d = sub.add_parser("diff", help="relative differences of two results files' counts")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--tolerance-pct", type=float, default=0.1, help="exit 1 above this (default 0.1)")
    d.add_argument("--top", type=int, default=20, help="rows shown above the tolerance (default 20)")
    d.add_argument("--all", action="store_true", help="show every row")
    d.set_defaults(func=cmd_diff)
    li = sub.add_parser("list", help="the definitions")
    li.add_argument("--build-dir", help=BUILD_DIR_HELP)
    li.set_defaults(func=cmd_list)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())