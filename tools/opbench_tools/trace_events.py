"""Chrome traces (Kineto / torch.profiler) read for opbench-trace: the file (plain or gzip), its event list,
and the GPU events in it.

GPU events are the complete ('X') events of the processes labelled GPU (a process_labels metadata event
whose labels contain "GPU", as PyTorch's compute_utilization takes them); in a trace without such a
label, the complete events of the GPU categories (FALLBACK_GPU_CATEGORIES). Every problem raises
TraceError naming the file and the event; a valid trace without GPU events raises NoGpuEventsError.
"""
from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from typing import Any, List, Sequence, Tuple

from opbench_tools.json_input import MAX_INPUT_BYTES, InputError, read_bytes

# Categories used when no process carries a "GPU" process_labels entry.
FALLBACK_GPU_CATEGORIES: Tuple[str, ...] = (
    "kernel", "gpu_memcpy", "gpu_memset",   # Kineto (PyTorch >= 1.8)
    "memcpy", "memset",                     # older spellings ("Kernel", "Memcpy", "Memset")
)

GZIP_MAGIC = b"\x1f\x8b"


class TraceError(ValueError):
    """A malformed trace.  ``exit_code`` is what the command exits with."""

    exit_code = 2


class NoGpuEventsError(TraceError):
    """A valid trace that holds no GPU events."""

    exit_code = 1


# --------------------------------------------------------------------------- loading

def load_trace(path: str) -> Any:
    """Read a trace file (plain or gzip, detected by content) and parse its JSON.

    Raises TraceError (naming the file) on unreadable / non-JSON input.
    """
    try:
        raw = read_bytes(path)
    except InputError as e:
        raise TraceError(str(e)) from None
    if raw[:2] == GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
                raw = unzipped.read(MAX_INPUT_BYTES + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"{path}: not a valid gzip file: {e}") from None
        if len(raw) > MAX_INPUT_BYTES:
            raise TraceError(f"{path}: unzips to more than the {MAX_INPUT_BYTES // 2**20} MiB limit on inputs")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not JSON (not UTF-8 text: {e.reason} at byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise TraceError(f"{path}: not JSON (nested too deeply)") from None


def trace_events(trace: Any, source: str = "<trace>") -> list:
    """The event list of a trace: ``trace["traceEvents"]`` (JSON Object Format) or the
    top-level array itself (JSON Array Format)."""
    if isinstance(trace, dict):
        if "traceEvents" not in trace:
            raise TraceError(f"{source}: no 'traceEvents' key in the top-level object")
        events = trace["traceEvents"]
        if not isinstance(events, list):
            raise TraceError(f"{source}: 'traceEvents' is a {type(events).__name__}, not a list")
        return events
    if isinstance(trace, list):
        return trace
    raise TraceError(f"{source}: top level is a {type(trace).__name__}, "
                     "expected an object with 'traceEvents' or an array of events")


# --------------------------------------------------------------------------- selection

def _labels_say_gpu(labels: Any) -> bool:
    if isinstance(labels, str):
        return "GPU" in labels                      # the seed: substring test
    if isinstance(labels, (list, tuple)):
        return any(isinstance(x, str) and "GPU" in x for x in labels)
    return False


def _gpu_pids(events: Sequence[Any]) -> list:
    pids: list = []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("name") != "process_labels":
            continue
        args = ev.get("args")
        if isinstance(args, dict) and _labels_say_gpu(args.get("labels")) and "pid" in ev:
            if ev["pid"] not in pids:
                pids.append(ev["pid"])
    return pids


def _categories(ev: dict) -> List[str]:
    cat = ev.get("cat")
    if not isinstance(cat, str):
        return []
    return [c.strip().lower() for c in cat.split(",") if c.strip()]


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_complete_event(ev: dict, index: int, source: str) -> None:
    name = ev.get("name")
    what = f"{source}: traceEvents[{index}]" + (f" ({name!r})" if isinstance(name, str) else "")
    for key in ("ts", "dur"):
        if key not in ev:
            raise TraceError(f"{what}: complete event (ph 'X') has no '{key}'")
        if not is_number(ev[key]):
            raise TraceError(f"{what}: '{key}' is not a finite number: {ev[key]!r}")
    if ev["dur"] < 0:
        raise TraceError(f"{what}: negative 'dur': {ev['dur']!r}")


def gpu_events(events: Sequence[dict], exclude_categories: Sequence[str] = (),
               source: str = "<trace>") -> Tuple[List[dict], list, str]:
    """(the GPU events sorted by ts, file order on ties; the GPU pids; how they were selected:
    "process_labels" or "category_fallback"). Events whose cat is in exclude_categories
    (case-insensitive) are left out. NoGpuEventsError when none is left."""
    excluded = {c.lower() for c in exclude_categories}
    pids = _gpu_pids(events)
    if pids:
        selection = "process_labels"

        def selected(ev: dict) -> bool:
            return "pid" in ev and ev["pid"] in pids
    else:
        selection = "category_fallback"
        fallback = set(FALLBACK_GPU_CATEGORIES)

        def selected(ev: dict) -> bool:
            return any(c in fallback for c in _categories(ev))

    picked: List[Tuple[int, dict]] = []
    for i, ev in enumerate(events):
        if ev.get("ph") != "X" or not selected(ev):
            continue
        if excluded and any(c in excluded for c in _categories(ev)):
            continue
        _check_complete_event(ev, i, source)
        picked.append((i, ev))

    if not picked:
        if pids:
            why = (f"GPU process(es) {', '.join(map(str, pids))} carry no complete ('X') events"
                   + (" after excluding categories" if excluded else ""))
        else:
            why = ("no process has a 'GPU' process_labels entry and no complete event has "
                   f"cat in {{{', '.join(FALLBACK_GPU_CATEGORIES)}}}")
        raise NoGpuEventsError(f"{source}: no GPU events ({why}); "
                               "was the trace recorded with CUDA activity enabled?")
    return [ev for _, ev in sorted(picked, key=lambda p: p[1]["ts"])], pids, selection
