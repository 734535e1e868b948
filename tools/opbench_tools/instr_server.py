"""The callgrind side of opbench-instr: `bench_instr --serve` fork servers and the dumps they leave.

A Server keeps one bench_instr process (under callgrind, or native) with its own directory; each command
runs in a child forked from it, so LibTorch loads once per server and every definition starts from the
same state. Under callgrind a child writes one dump per measured phase (CALLGRIND_DUMP_STATS_AT(label)),
which read_dumps turns into {label: total Ir}.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

VALGRIND_ARGS = ["--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no"]
# Workers run with a fixed environment: counts must not depend on who runs them, or from where.
# OMP_WAIT_POLICY=PASSIVE: OpenMP threads block instead of spinning at barriers, so a 2-thread
# count does not depend on how long the calling thread spun waiting for the other one.
# glibc.malloc.mxfast=0: no fastbins, so no malloc_consolidate that, depending on the heap's state,
# sweeps them during one repeat and not another (with fastbins repeats differ by up to 14%, without by < 1%).
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C", "LC_ALL": "C",
              "OMP_WAIT_POLICY": "PASSIVE", "GLIBC_TUNABLES": "glibc.malloc.mxfast=0"}
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


# ---------------------------------------------------------------- fork servers
class Server:
    """A `bench_instr --serve` process (under callgrind, or native) with its own directory: each
    command runs in a forked child of it, whose callgrind dumps land in that directory."""

    STARTUP_TIMEOUT = 600.0

    def __init__(self, exe: Path, directory: Path, valgrind: str | None, env: dict | None = None):
        self.exe, self.dir, self.valgrind = Path(exe).resolve(), directory, valgrind   # it runs in `directory`
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

