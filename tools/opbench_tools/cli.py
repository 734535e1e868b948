"""What every opbench console script shares: an argument error in one line, and one line and an exit code
for every exception a tool's own handling did not catch, never a traceback.

Exit codes: 2 for unusable input (a bad argument, an unreadable or malformed file, anything the tool
could not make sense of, out of memory); 4 for a gate that cannot decide (opbench-gate's INCONCLUSIVE; 3 is
opbench-shard's killed shard); 130 / 143 for SIGINT / SIGTERM; 141 when stdout is closed
early (a pipe into `head`), silently. OPBENCH_TRACEBACK=1 re-raises
an unexpected exception, for whoever debugs the tool.
"""
from __future__ import annotations

import argparse
import io
import os
import signal
import sys

UNUSABLE = 2
INCONCLUSIVE = 4
TRACEBACK_VARIABLE = "OPBENCH_TRACEBACK"


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error naming --help instead of the usage block."""

    def error(self, message: str):
        self.exit(UNUSABLE, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def one_line(text) -> str:
    """`text` on one line: line breaks shown as \\n."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


class Terminated(Exception):
    """SIGTERM arrived; exit 143."""


def on_sigterm(signum, frame):
    raise Terminated()


def run(prog: str, body, argv) -> int:
    """body(argv)'s exit code, or one line on stderr and an exit code for any exception it raised."""
    try:
        return body(argv)
    except KeyboardInterrupt:
        return _say(prog, "interrupted (SIGINT)", 128 + signal.SIGINT)
    except Terminated:
        return _say(prog, "terminated (SIGTERM)", 128 + signal.SIGTERM)
    except BrokenPipeError:   # stdout closed early (| head): stop quietly, as a pipeline expects
        _silence_stdout()
        return 128 + signal.SIGPIPE
    except MemoryError:
        return _say(prog, "error: out of memory (an input too large for this machine?)", UNUSABLE)
    except RecursionError:
        return _say(prog, "error: an input nested too deeply", UNUSABLE)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        return _say(prog, f"error: {where}{e.strerror or e}", UNUSABLE)
    except Exception as e:   # noqa: BLE001 - the point: no traceback reaches the user
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        if type(e).__module__.startswith("opbench_tools"):
            return _say(prog, f"error: {e}", UNUSABLE)
        return _say(prog, f"error: unexpected {type(e).__name__}: {e} ({TRACEBACK_VARIABLE}=1 shows where)",
                    UNUSABLE)


def _silence_stdout() -> None:
    """Points stdout at /dev/null so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def _say(prog: str, message: str, code: int) -> int:
    try:
        sys.stderr.write(f"{prog}: {one_line(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return code


def write_atomically(path: str, text) -> None:
    """Writes `text` (str or bytes) to `path` through a unique temporary file beside it, renamed over it at the end: a
    failure leaves the previous file as it was. A symbolic link's target is the file replaced. An output
    that is not a regular file (/dev/null, a pipe such as /dev/fd/63) is written directly, never replaced."""
    import stat
    import tempfile
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, "wb") as f:
            f.write(data)
        return
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if os.path.exists(target):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def file_identity(path: str):
    """(device, inode) of an existing file, else its resolved path: two names of one file compare equal."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return os.path.realpath(path)


def check_outputs(inputs: dict, outputs: dict) -> None:
    """InputError (exit 2) before any work when an output ({flag: path}; "-" is stdout) is an input, another
    output, a folder, or in a folder that is missing or not writable."""
    from opbench_tools.json_input import InputError
    seen = {file_identity(path): flag for flag, path in inputs.items() if path}
    for flag, path in outputs.items():
        if not path or path == "-":
            continue
        key = file_identity(path)
        if key in seen:
            raise InputError(f"{flag} {path}: the same file as {seen[key]}; choose another")
        seen[key] = flag
        if os.path.isdir(path):
            raise InputError(f"{flag} {path}: is a folder; name a file")
        folder = os.path.dirname(os.path.realpath(path)) or "."
        if not os.path.isdir(folder):
            raise InputError(f"{flag} {path}: the folder {folder} does not exist")
        if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise InputError(f"{flag} {path}: not writable")


FIGURE_FORMATS = ("png", "svg", "pdf")


def check_figure_path(flag: str, path: str) -> None:
    """InputError unless `path` ends in a format the figures are written in."""
    from opbench_tools.json_input import InputError
    if path.rsplit(".", 1)[-1].lower() not in FIGURE_FORMATS or "." not in os.path.basename(path):
        raise InputError(f"{flag} {path}: name a .png, .svg or .pdf file")


def save_figure(fig, path: str, dpi: int) -> None:
    """A matplotlib figure written to `path` (its format from the extension) as write_atomically writes."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format=path.rsplit(".", 1)[-1].lower(), dpi=dpi)
    write_atomically(path, buffer.getvalue())
