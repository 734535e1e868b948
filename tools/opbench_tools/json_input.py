"""Bounded reading of the tools' input files, and a JSON reader that hands one list's items over one at a
time instead of keeping them (a Google Benchmark file's "benchmarks").

Every input is a regular file of at most MAX_INPUT_BYTES: a FIFO, a device (/dev/zero), a socket or a
folder is refused before a byte is read, and a file that grows past the limit while it is read is
refused too, so no input is read without end. Every problem raises InputError naming the file (and
line:column for malformed JSON); a key twice in one object is refused (which one counts is ambiguous).
"""
from __future__ import annotations

import json
import os
import re
import stat

MAX_INPUT_BYTES = 256 * 1024 * 1024   # 256 MiB: a 200 MB input stays within 1 GB of memory
_SPACE = re.compile(r"[ \t\n\r]*")
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class InputError(Exception):
    """Unusable input (missing file, malformed JSON, nothing to compare); the message names the file."""


def read_bytes(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The content of the regular file `path`, at most `limit` bytes; InputError otherwise."""
    try:   # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        kind = next((name for test, name in _KINDS if test(st.st_mode)), None if regular else "not a file")
        if kind:
            raise InputError(f"{path}: is {kind}, not a regular file: inputs are read from files only")
        try:
            data = _read_upto(f, min(st.st_size, limit), limit)
        except OSError as e:
            raise InputError(f"{path}: cannot read: {e.strerror}") from None
    if len(data) > limit:
        raise InputError(f"{path}: larger than the {limit // 2**20} MiB limit on inputs "
                         "(docs/inputs_and_exit_codes.md)")
    return data


def _read_upto(f, expected: int, limit: int) -> bytes:
    """Up to limit + 1 bytes of `f`: one read of the size the file had, then chunks while it grows."""
    data = f.read(expected + 1)
    while len(data) > expected and len(data) <= limit:
        chunk = f.read(min(1 << 24, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def read_text(path: str, limit: int = MAX_INPUT_BYTES) -> str:
    """read_bytes as UTF-8 text; InputError naming the first byte that is not UTF-8."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None


def parse_json_file(path: str):
    """Any JSON file's content; InputError naming the file (and line:column) on any problem."""
    text = read_text(path)
    return _decoding(path, lambda: _decoder(path).decode(text))


def parse_json_document_or_lines(path: str) -> tuple:
    """("document", value) for a file holding one JSON value, else ("lines", [(line, value), ...]) for JSON
    Lines (one value per non-blank line: bench_ops' dashboard sidecar); InputError naming file:line:column."""
    text = read_text(path)
    decoder = _decoder(path)
    start = _SPACE.match(text, 0).end()
    value, end = _decoding(path, lambda: decoder.raw_decode(text, start))
    if _SPACE.match(text, end).end() == len(text):
        return "document", value
    lines = []
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                lines.append((number, decoder.decode(line)))
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{number}:{e.colno}: malformed JSON Lines: {e.msg}") from None
            except (RecursionError, ValueError) as e:
                raise InputError(f"{path}:{number}: malformed JSON Lines: {e or 'nested too deeply'}") from None
    return "lines", lines


def scan_json_file(path: str, list_key: str, on_item) -> tuple:
    """(the file's top-level value, whether it streamed `list_key`). When the top level is an object whose
    `list_key` holds a list, each item goes to on_item(index, item) as it is parsed and the object gets
    the number of items under that key instead of the list."""
    text = read_text(path)
    return _decoding(path, lambda: _Scanner(path, text).document(list_key, on_item))


def _decoding(path: str, parse):
    try:
        return parse()
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except RecursionError:
        raise InputError(f"{path}: malformed JSON: nested too deeply") from None
    except ValueError as e:   # an integer of more digits than Python converts
        raise InputError(f"{path}: malformed JSON: {e}") from None


def _decoder(path: str) -> json.JSONDecoder:
    def unique(pairs):
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set = set()
            dup = next(k for k, _ in pairs if k in seen or seen.add(k))
            raise InputError(f"{path}: the key {dup!r} appears twice in one object (which one counts is ambiguous)")
        return out
    return json.JSONDecoder(object_pairs_hook=unique)


class _Scanner:
    """Walks the top-level object itself so that one list's items are parsed (and dropped) one by one."""

    def __init__(self, path: str, text: str):
        self.path, self.text, self.decoder = path, text, _decoder(path)

    def space(self, pos: int) -> int:
        return _SPACE.match(self.text, pos).end()

    def fail(self, message: str, pos: int):
        raise json.JSONDecodeError(message, self.text, pos)

    def document(self, list_key: str, on_item) -> tuple:
        pos = self.space(0)
        if not self.text.startswith("{", pos):
            return self.decoder.decode(self.text), False
        top, streamed, pos = {}, False, self.space(pos + 1)
        if self.text.startswith("}", pos):
            return self.end(top, pos + 1), False
        while True:
            if not self.text.startswith('"', pos):
                self.fail("Expecting property name enclosed in double quotes", pos)
            key, pos = self.decoder.raw_decode(self.text, pos)
            pos = self.space(pos)
            if not self.text.startswith(":", pos):
                self.fail("Expecting ':' delimiter", pos)
            pos = self.space(pos + 1)
            if key in top:
                raise InputError(f"{self.path}: the key {key!r} appears twice in one object "
                                 "(which one counts is ambiguous)")
            if key == list_key and self.text.startswith("[", pos):
                top[key], pos = self.items(pos, on_item)
                streamed = True
            else:
                top[key], pos = self.decoder.raw_decode(self.text, pos)
            pos = self.space(pos)
            if self.text.startswith("}", pos):
                return self.end(top, pos + 1), streamed
            if not self.text.startswith(",", pos):
                self.fail("Expecting ',' delimiter", pos)
            pos = self.space(pos + 1)

    def items(self, pos: int, on_item) -> tuple:
        """(item count, position after the list) of the list at `pos`, each item given to on_item."""
        count, pos = 0, self.space(pos + 1)
        if self.text.startswith("]", pos):
            return 0, pos + 1
        while True:
            item, pos = self.decoder.raw_decode(self.text, pos)
            on_item(count, item)
            count, pos = count + 1, self.space(pos)
            if self.text.startswith("]", pos):
                return count, pos + 1
            if not self.text.startswith(",", pos):
                self.fail("Expecting ',' delimiter", pos)
            pos = self.space(pos + 1)

    def end(self, top: dict, pos: int) -> dict:
        if self.space(pos) != len(self.text):
            self.fail("Extra data", self.space(pos))
        return top
