#!/usr/bin/env python3
"""instr_counts.py: instruction counts of small LibTorch statements (bench_instr under callgrind).

  run   the whole set (or --filter): one worker process per definition in a pool of --jobs (default:
        the machine's cores), each under valgrind --tool=callgrind, plus a short native run of the same
        definition for wall time; a progress line with ETA; a per-worker timeout with retries; results
        as Google-Benchmark-shaped JSON (--out) that compare.py / gate.py read with --metric instructions.
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
import concurrent.futures as cf
import datetime
import json
import os
import platform
import queue
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = "instruction_counts"
NAME_PREFIX = "Instr"
VALGRIND_ARGS = ["--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no"]
# Workers run with a fixed environment: counts must not depend on who runs them, or from where.
# OMP_WAIT_POLICY=PASSIVE: OpenMP threads block instead of spinning at barriers, so a 2-thread
# count does not depend on how long the calling thread spun waiting for the other one.
# glibc.malloc.mxfast=0: no fastbins, so no malloc_consolidate that, depending on the heap's state,
# sweeps them during one repeat and not another (repeats differed by up to 14% with them, < 1% without).
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C", "LC_ALL": "C",
              "OMP_WAIT_POLICY": "PASSIVE", "GLIBC_TUNABLES": "glibc.malloc.mxfast=0"}
SLOW_GROUPS = ("training", "nn", "mesoscale")
_TRIGGER = re.compile(r"^desc: Trigger: Client Request: (\S+)\s*$", re.M)
_TOTALS = re.compile(r"^(?:totals|summary): (\d+)", re.M)


class WorkerError(Exception):
    """A worker failed: the message says how (exit status, timeout, unreadable output)."""


# ---------------------------------------------------------------- callgrind dumps
def parse_dump(text: str) -> tuple[str, int]:
    """(trigger label, total Ir) of one callgrind dump made by CALLGRIND_DUMP_STATS_AT(label)."""
    trig = _TRIGGER.search(text)
    tot = _TOTALS.findall(text)
    if not trig or not tot:
        raise WorkerError("callgrind dump without a client-request trigger or totals line")
    return trig.group(1), int(tot[-1])


def read_dumps(directory: Path, pattern: str) -> dict[str, int]:
    """Trigger label -> total Ir of the dumps matching `pattern` (one process's: cg.<pid>.*)."""
    out = {}
    for path in directory.glob(pattern):
        label, total = parse_dump(path.read_text(errors="replace"))
        if label in out:
            raise WorkerError(f"two callgrind dumps labelled {label!r}")
        out[label] = total
    return out


def per_call_counts(dumps: list[str], totals: dict[str, int], iters: int) -> list[float]:
    """Per repeat: (statement loop - empty loop) / iters. `dumps` alternates ...base, ...stmt."""
    if len(dumps) % 2 or not dumps:
        raise WorkerError(f"expected base/stmt dump pairs, got {dumps}")
    counts = []
    for base, stmt in zip(dumps[0::2], dumps[1::2]):
        if not (base.endswith(".base") and stmt.endswith(".stmt")):
            raise WorkerError(f"unexpected dump labels {base}, {stmt}")
        missing = [d for d in (base, stmt) if d not in totals]
        if missing:
            raise WorkerError(f"callgrind wrote no dump for {missing}")
        counts.append((totals[stmt] - totals[base]) / iters)
    return counts


def spread(values: list[float]) -> float:
    """(max - min) / median, as a fraction; 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else 0.0


# ---------------------------------------------------------------- fork servers
class Server:
    """A `bench_instr --serve` process (under callgrind, or native) with its own directory: each
    command runs in a forked child of it, whose callgrind dumps land in that directory."""

    STARTUP_TIMEOUT = 600.0

    def __init__(self, exe: Path, directory: Path, valgrind: str | None, env: dict | None = None):
        self.exe, self.dir, self.valgrind = exe, directory, valgrind
        self.env = env or WORKER_ENV
        self.proc: subprocess.Popen | None = None
        self.buf = b""

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        cmd = [str(self.exe), "--serve"]
        if self.valgrind:
            cmd = [self.valgrind, *VALGRIND_ARGS, f"--callgrind-out-file={self.dir}/cg.%p", *cmd]
        log = open(self.dir / "server.log", "ab")
        self.proc = subprocess.Popen(cmd, cwd=self.dir, env=self.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log)
        log.close()
        self.buf = b""
        line = self._readline(time.monotonic() + self.STARTUP_TIMEOUT)
        if line != "ready":
            self.stop()
            raise WorkerError(f"server did not start ({' '.join(cmd)}): {line!r}\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = (self.dir / "server.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _readline(self, deadline: float) -> str | None:
        """The next stdout line, or None on EOF or at the deadline."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace").strip()

    def run(self, args: list[str], timeout: float) -> tuple[int, dict]:
        """Runs one `--run ...` command in a child: (child pid, its JSON document)."""
        if not self.alive():
            self.start()
        for name in ("result.json", "stderr.txt"):
            (self.dir / name).unlink(missing_ok=True)
        # The same relative paths for every command: the child's heap before it measures must not
        # depend on where the results go.
        line = "\t".join([*args, "--out", "result.json", "--stderr", "stderr.txt"]) + "\n"
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except OSError:
            raise WorkerError(f"server died:\n{self.log_tail()}") from None
        started = self._readline(time.monotonic() + 60)
        if not started or not started.startswith("started "):
            self.stop()
            raise WorkerError(f"server did not fork ({started!r}):\n{self.log_tail()}")
        pid = int(started.split()[1])
        exited = self._readline(time.monotonic() + timeout)
        if exited is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._readline(time.monotonic() + 30)
            self._clean(pid)
            raise WorkerError(f"timed out after {timeout:.0f} s: {' '.join(args)}")
        code = int(exited.split()[2])
        if code != 0:
            self._clean(pid)
            raise WorkerError(f"exit status {code}: {' '.join(args)}\n{self.child_stderr()}")
        try:
            return pid, json.loads((self.dir / "result.json").read_text())
        except (OSError, json.JSONDecodeError):
            raise WorkerError(f"no result from {' '.join(args)}\n{self.child_stderr()}") from None

    def child_stderr(self, lines: int = 15) -> str:
        try:
            text = (self.dir / "stderr.txt").read_text(errors="replace")
        except OSError:
            text = ""
        return "\n".join(text.strip().splitlines()[-lines:]) or self.log_tail(lines)

    def dumps(self, pid: int) -> dict[str, int]:
        totals = read_dumps(self.dir, f"cg.{pid}.*")
        self._clean(pid)
        return totals

    def _clean(self, pid: int) -> None:
        for path in self.dir.glob(f"cg.{pid}*"):
            path.unlink(missing_ok=True)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


@dataclass
class Slot:
    """One place in the pool: a callgrind server and a native one."""
    counted: Server
    timed: Server


# ---------------------------------------------------------------- one definition
@dataclass
class Job:
    label: str
    group: str
    stmt: str
    variants: list
    attempts: int = 0
    seconds: float = 0.0
    error: str = ""
    torch_version: str = ""
    entries: list = field(default_factory=list)


def bench_instr_path(build_dir: str | None) -> Path:
    build = Path(build_dir or os.environ.get("OPBENCH_BUILD_DIR") or ROOT / "build")
    exe = (build / "bench_instr").resolve()
    if not exe.exists():
        raise SystemExit(f"instr_counts: {exe} not found: build it (tools/build.sh, target bench_instr)")
    return exe


def list_definitions(exe: Path) -> list[dict]:
    out = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True, check=True,
                         env=WORKER_ENV)
    return json.loads(out.stdout)


def worker_args(job: Job, args) -> list[str]:
    cmd = ["--run", job.label, "--threads", args.threads, "--repeats", str(args.repeats)]
    if args.iters:
        cmd += ["--iters", str(args.iters)]
    if args.extra_work == job.label:
        cmd.append("--extra-work")
    return cmd


def entry(job: Job, r: dict, totals: dict[str, int], wall: list) -> dict:
    """One Google-Benchmark-shaped result of a (variant, threads)."""
    per_call = per_call_counts(r["dumps"], totals, r["iters"])
    base = [totals[d] / r["iters"] for d in r["dumps"][0::2]]
    med = statistics.median(per_call)
    wall_ns = statistics.median(wall) if wall else 0.0
    name = f"{NAME_PREFIX}/{job.group}/{job.label}/{r['variant']}/t{r['threads']}"
    return {
        "name": name, "run_name": name, "run_type": "iteration",
        "repetitions": 1, "repetition_index": 0, "threads": r["threads"],
        "iterations": r["iters"],
        "real_time": round(wall_ns, 1), "cpu_time": round(wall_ns, 1), "time_unit": "ns",
        "instructions": round(med, 1),
        "instructions_total": round(med * r["iters"]),
        "baseline_instructions": round(statistics.median(base), 1),
        "spread_pct": round(100 * spread(per_call), 3),
        "repeats": [round(c, 1) for c in per_call],
        "label": job.label, "group": job.group, "variant": r["variant"], "stmt": job.stmt,
    }


def measure(job: Job, slot: Slot, args) -> list[dict]:
    """Counts (callgrind child) and wall times (native child) of one definition."""
    pid, counted = slot.counted.run(worker_args(job, args), args.timeout)
    totals = slot.counted.dumps(pid)
    job.torch_version = counted.get("torch_version", "")
    timed = {}
    if not args.no_wall:
        _, native = slot.timed.run(worker_args(job, args), args.timeout)
        timed = {(r["variant"], r["threads"]): r.get("wall_ns") or [] for r in native["results"]}
    return [entry(job, r, totals, timed.get((r["variant"], r["threads"]), []))
            for r in counted["results"]]


# ---------------------------------------------------------------- the pool
class Progress:
    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.failed, self.running = total, 0, 0, 0
        self.start = time.monotonic()
        self.stream, self.tty = stream, stream.isatty()
        self.lock = threading.Lock()

    @staticmethod
    def fmt(seconds: float) -> str:
        seconds = int(round(seconds))
        return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"

    def update(self, started: int = 0, finished: Job | None = None) -> None:
        with self.lock:
            self.running += started
            if finished is not None:
                self.running -= 1
                self.done += 1
                self.failed += bool(finished.error)
            elapsed = time.monotonic() - self.start
            eta = elapsed / self.done * (self.total - self.done) if self.done else None
            line = (f"[instr] {self.done}/{self.total} done"
                    + (f", {self.failed} FAILED" if self.failed else "")
                    + f", {self.running} running, {self.fmt(elapsed)} elapsed"
                    + (f", ETA {self.fmt(eta)}" if eta is not None else ""))
            if finished is not None:
                line += (f"  | {finished.group}/{finished.label} "
                         + ("FAILED" if finished.error else f"{finished.seconds:.1f} s")
                         + (f" ({finished.attempts} attempts)" if finished.attempts > 1 else ""))
            if self.tty:
                self.stream.write("\r\033[K" + line)
                if self.done == self.total:
                    self.stream.write("\n")
            elif finished is not None:
                self.stream.write(line + "\n")
            self.stream.flush()


def run_job(job: Job, slots: queue.Queue, args, progress: Progress) -> Job:
    slot = slots.get()
    progress.update(started=1)
    start = time.monotonic()
    try:
        for attempt in range(1, args.retries + 2):
            job.attempts = attempt
            try:
                job.entries = measure(job, slot, args)
                job.error = ""
                break
            except (WorkerError, OSError, KeyError, ValueError) as e:
                job.error = str(e) or type(e).__name__
    finally:
        slots.put(slot)
    job.seconds = time.monotonic() - start
    progress.update(finished=job)
    return job


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


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cmd_run(args) -> int:
    bad_env = [kv for kv in args.env if "=" not in kv or kv.startswith("=")]
    if bad_env:
        print(f"instr_counts: --env needs KEY=VALUE, got {bad_env}", file=sys.stderr)
        return 2
    valgrind = shutil.which(args.valgrind)
    if valgrind is None:
        print(f"instr_counts: {args.valgrind} not found (tools/setup.sh installs valgrind)", file=sys.stderr)
        return 2
    args.valgrind = valgrind
    exe = bench_instr_path(args.build_dir)
    defs = list_definitions(exe)
    if args.filter:
        pattern = re.compile(args.filter)
        defs = [d for d in defs if pattern.search(f"{d['group']}/{d['label']}")]
    if not defs:
        print("instr_counts: no definition matches the filter", file=sys.stderr)
        return 2
    if args.extra_work and not any(d["label"] == args.extra_work for d in defs):
        print(f"instr_counts: --extra-work {args.extra_work}: no such definition in the set",
              file=sys.stderr)
        return 2
    jobs = [Job(d["label"], d["group"], d["stmt"], d["variants"]) for d in defs]
    # The slow groups first, so that the pool does not end on a straggler.
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].group not in SLOW_GROUPS)
    n_jobs = max(1, min(args.jobs or default_jobs(), len(jobs)))
    print(f"[instr] {len(jobs)} definitions, threads {args.threads}, {args.repeats} repeats, "
          f"{n_jobs} workers ({exe})", file=sys.stderr)
    progress = Progress(len(jobs))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="instr_counts_") as tmp:
        slots: queue.Queue = queue.Queue()
        env = dict(WORKER_ENV, **dict(kv.split("=", 1) for kv in args.env))
        all_slots = [Slot(Server(exe, Path(tmp) / f"s{k}", args.valgrind, env),
                          Server(exe, Path(tmp) / f"s{k}n", None, env)) for k in range(n_jobs)]
        for slot in all_slots:
            slots.put(slot)
        try:
            with cf.ThreadPoolExecutor(max_workers=n_jobs) as pool:
                futures = [pool.submit(run_job, jobs[i], slots, args, progress) for i in order]
                for f in futures:
                    f.result()
        finally:
            for slot in all_slots:
                slot.counted.stop()
                slot.timed.stop()
    wall_s = time.monotonic() - start

    failed = [j for j in jobs if j.error]
    benchmarks = [e for j in jobs for e in j.entries]
    for j in failed:
        benchmarks.append({"name": f"{NAME_PREFIX}/{j.group}/{j.label}", "run_name":
                           f"{NAME_PREFIX}/{j.group}/{j.label}", "run_type": "iteration",
                           "error_occurred": True, "error_message": j.error.splitlines()[0]})
    context = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": str(exe),
        "num_cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "library_build_type": "release",
        "opbench_suite": SUITE,
        "torch_version": next((j.torch_version for j in jobs if j.torch_version), "unknown"),
        "valgrind_version": tool_version([args.valgrind, "--version"]),
        "git_sha": tool_version(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"]),
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
    text = dump_results({"context": context, "benchmarks": benchmarks})
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
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


def dump_results(doc: dict) -> str:
    """The results JSON: the context indented, one line per benchmark (small, diff-friendly)."""
    rows = ",\n".join("  " + json.dumps(b) for b in doc["benchmarks"])
    context = json.dumps(doc["context"], indent=1).replace("\n", "\n ")
    return f'{{\n "context": {context},\n "benchmarks": [\n{rows}\n ]\n}}\n'


# ---------------------------------------------------------------- diff
def load_counts(path: str) -> dict[str, float]:
    data = json.loads(Path(path).read_text())
    return {b["name"]: float(b["instructions"]) for b in data["benchmarks"]
            if "instructions" in b and not b.get("error_occurred")}


def diff_counts(a: dict[str, float], b: dict[str, float]) -> tuple[list, list, list]:
    """(rows (name, a, b, relative change b/a - 1), names only in a, names only in b)."""
    rows = [(n, a[n], b[n], (b[n] / a[n] - 1) if a[n] else (0.0 if b[n] == a[n] else float("inf")))
            for n in a if n in b]
    return rows, [n for n in a if n not in b], [n for n in b if n not in a]


def cmd_diff(args) -> int:
    a, b = load_counts(args.a), load_counts(args.b)
    rows, only_a, only_b = diff_counts(a, b)
    if not rows:
        print("instr_counts diff: no benchmark names in common", file=sys.stderr)
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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure the set: a worker pool of callgrind processes")
    r.add_argument("--build-dir", help="where bench_instr is (default $OPBENCH_BUILD_DIR, else build/)")
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
    li.add_argument("--build-dir")
    li.set_defaults(func=cmd_list)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
