"""Runs benchmark processes for opbench-compare --binaries and opbench-gate-selftest: one process per
repetition, in the order given, up to `jobs` at a time. With jobs > 1 every bench_ops process gets
--opbench_gpu_lock, so they load and initialize together but measure one at a time (the lock is taken
before the first case); starting is what costs most per process (loading LibTorch and CUDA).
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field

from opbench_tools.benchmark_json import InputError


@dataclass
class Process:
    label: str        # for progress lines, e.g. "old 3/10"
    cmd: list         # the command, without the lock flag
    out: str          # the Google Benchmark JSON it must write
    log: str          # its stdout + stderr
    env: dict = field(default_factory=dict)   # variables set for it (over this process's environment)


@dataclass
class Group:
    """The processes of one side (a binary and its arguments): their JSON files, in run order."""
    name: str         # the files' prefix: old, new, B3, ...
    binary: str
    extra: list       # more benchmark arguments
    files: list = field(default_factory=list)
    env: dict = field(default_factory=dict)   # variables its processes get, e.g. CUDA_VISIBLE_DEVICES


def interleaved(groups: list, filter_regex: str, count: int, out_dir: str, rotate: bool) -> list:
    """`count` more processes of every group, a process of each in turn (A B A B ...; with `rotate` the order
    rotates from one round to the next: A B C, B C A, ...), so that whatever drifts on the machine reaches
    every group alike and the i-th processes of the groups run side by side. Appends to each group's files."""
    processes = []
    for j in range(count):
        for k in range(len(groups)):
            group = groups[(j + k) % len(groups) if rotate else k]
            i = len(group.files)
            out = os.path.join(out_dir, f"{group.name}-{i}.json")
            group.files.append(out)
            processes.append(Process(f"{group.name} rep {i + 1}", benchmark_command(group.binary, filter_regex, out,
                                                                                  group.extra),
                                     out, os.path.join(out_dir, f"{group.name}-{i}.log"), group.env))
    return processes


def cases_filter(names) -> str:
    """A --benchmark_filter selecting exactly these cases (Google Benchmark's suffixes allowed), written in
    the POSIX extended syntax Google Benchmark's regex accepts."""
    special = set(".^$*+?()[]{}|\\")
    escaped = ["".join("\\" + ch if ch in special else ch for ch in name) for name in sorted(names)]
    return "^(" + "|".join(escaped) + ")(/.*)?$"


def benchmark_command(binary: str, filter_regex: str, out: str, extra: list) -> list:
    cmd = [binary, f"--benchmark_filter={filter_regex}", "--benchmark_repetitions=1",
           f"--benchmark_out={out}", "--benchmark_out_format=json"]
    for arg in extra:
        cmd += shlex.split(arg)
    return cmd


def run_processes(processes: list, jobs: int, lock_path: str | None, budget_s: float | None = None) -> None:
    """Runs every process (with `budget_s`, none is started after that many seconds: the caller uses
    what finished); InputError naming the first that failed (exit status, or no JSON written)."""
    running: list = []
    pending = list(processes)
    start = time.monotonic()
    done = 0
    while pending or running:
        if budget_s is not None and pending and time.monotonic() - start > budget_s:
            print(f"[runs] time budget of {budget_s:g} s spent: {len(pending)} process(es) not started", file=sys.stderr)
            pending = []
            if not running:
                break
        while pending and len(running) < max(1, jobs):
            p = pending.pop(0)
            cmd = p.cmd + ([f"--opbench_gpu_lock={lock_path}"] if jobs > 1 and lock_path else [])
            env_text = "".join(f"{k}={shlex.quote(v)} " for k, v in p.env.items())
            print(f"[runs] {p.label}: {env_text}{shlex.join(cmd)}", file=sys.stderr)
            try:
                log = open(p.log, "w", encoding="utf-8")
                env = dict(os.environ, **p.env) if p.env else None
                running.append((p, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log))
            except OSError as e:
                raise InputError(f"{p.cmd[0]}: cannot run: {e.strerror}") from None
        p, proc, log = running.pop(0)
        rc = proc.wait()
        log.close()
        done += 1
        if rc != 0 or not os.path.exists(p.out):
            for _, other, other_log in running:
                other.kill()
                other.wait()
                other_log.close()
            raise InputError(f"{p.cmd[0]}: exited with status {rc} (log: {p.log})")
        if done % 10 == 0 or not (pending or running):
            elapsed = time.monotonic() - start
            eta = elapsed / done * (len(processes) - done)
            print(f"[runs] {done}/{len(processes)} processes done, {elapsed:.0f} s, ~{eta:.0f} s left", file=sys.stderr)
