"""The measuring side of opbench-instr: a pool of slots, each a callgrind fork server and a native one,
that measures one definition at a time (its counts under callgrind, its wall time natively), retries a
failed one, and shows progress with an ETA. The slow groups start first so that the pool does not end
on a straggler.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from opbench_tools.instr_server import WORKER_ENV, Server, WorkerError

NAME_PREFIX = "Instr"
SLOW_GROUPS = ("training", "nn", "mesoscale")


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


DEFINITION_KEYS = {"group": str, "label": str, "variants": list, "iters": int, "stmt": str}


def list_definitions(exe: Path) -> list[dict]:
    """bench_instr's definitions; InputError when it fails or prints something else than their list."""
    from opbench_tools.json_input import InputError
    try:
        out = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True, env=WORKER_ENV,
                             timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise InputError(f"{exe}: cannot run: {e}") from None
    first = (out.stderr.strip().splitlines() or ["no message"])[0]
    if out.returncode != 0:
        raise InputError(f"{exe} --list --json: exit {out.returncode}: {first}")
    try:
        defs = json.loads(out.stdout)
    except ValueError:
        defs = None
    good = isinstance(defs, list) and all(
        isinstance(d, dict) and all(isinstance(d.get(k), t) for k, t in DEFINITION_KEYS.items()) for d in defs)
    if not good:
        raise InputError(f"{exe} --list --json: not a list of definitions ({', '.join(DEFINITION_KEYS)}): "
                         "is it bench_instr of this checkout?")
    return defs


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


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1



def run_pool(jobs: list[Job], exe: Path, args, env: dict, n_jobs: int) -> float:
    """Measures every job in a pool of `n_jobs` slots, the slow groups first; the wall seconds it took."""
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].group not in SLOW_GROUPS)
    progress = Progress(len(jobs))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="instr_counts_") as tmp:
        slots: queue.Queue = queue.Queue()
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
    return time.monotonic() - start
