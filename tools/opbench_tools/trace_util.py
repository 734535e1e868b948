"""GPU utilization and matmul/conv share from a Chrome trace (Kineto / torch.profiler).

Library + command.  Given a Chrome trace (as written by PyTorch's profiler,
``torch.profiler.profile(...).export_chrome_trace(path)`` or LibTorch's
``ProfilerResult::save(path)``) it computes

* busy_us     -- length of the union of the GPU events' intervals [ts, ts+dur]
* mm_busy_us  -- the same union restricted to kernels whose name matches an
                 mm/conv pattern
* total_us    -- wall time: ``--total-us``/``--total-s`` when given, otherwise the
                 trace's own GPU span (first GPU event start -> last GPU event end)
* gpu_util    -- busy_us / total_us
* mm_util     -- mm_busy_us / total_us (a share of *wall time*, not of busy time)

The algorithm follows PyTorch's ``torch/_functorch/benchmark_utils.py``
(``compute_utilization``); the exact rules and the places where this tool goes
beyond it are written down in docs/trace_util.md.  Reading the trace and picking its
GPU events: trace_events.py.  Stdlib only.

Exit codes of the command: 0 ok, 1 valid trace without GPU events,
2 malformed trace / unreadable file / bad arguments.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from opbench_tools import cli
from opbench_tools.trace_events import (FALLBACK_GPU_CATEGORIES, NoGpuEventsError, TraceError, gpu_events, is_number,
                                        load_trace, trace_events)

__all__ = [
    "SEED_MM_PATTERNS",
    "MODERN_MM_PATTERNS",
    "FALLBACK_GPU_CATEGORIES",
    "TraceError",
    "NoGpuEventsError",
    "UtilResult",
    "load_trace",
    "trace_events",
    "analyze",
    "analyze_file",
    "main",
]

# The seed's four case-sensitive substrings, as regular expressions.
SEED_MM_PATTERNS: Tuple[str, ...] = ("gemm", "conv", "cutlass", "wgrad")

# Names of current mm/conv kernels that the seed's substrings miss
# (case-sensitive regular expressions, searched anywhere in the name).
MODERN_MM_PATTERNS: Tuple[str, ...] = (
    "nvjet",             # cuBLAS(Lt) Hopper/Blackwell GEMMs: nvjet_tst_..., nvjet_hsh_...
    "xmma",              # sm80_xmma_*, sm90_xmma_* (cuBLAS / cuDNN fprop, dgrad, wgrad)
    "cublas",            # cublasLt::splitKreduce_kernel, cublas internal kernels
    "gemv",              # gemv2T_kernel_val, gemvx::kernel (matrix-vector)
    "scudnn",            # volta_scudnn_128x64_relu_..., cudnn_infer_ampere_scudnn_...
    "dgrad",             # convolution data-gradient kernels
    "fprop",             # convolution forward kernels named *_fprop_*
    r"triton_tem_\w*mm",  # Inductor mm templates: triton_tem_fused_mm_0, ..._addmm_1
)


@dataclass(frozen=True)
class UtilResult:
    busy_us: float
    mm_busy_us: float
    total_us: float
    gpu_util: Optional[float]       # None when total_us == 0
    mm_util: Optional[float]        # None when total_us == 0
    kernel_count: int               # all selected GPU events (kernels, memcpy, memset, ...)
    total_source: str               # "argument" or "trace_span"
    mm_kernel_count: int = 0
    busy_segments: int = 0          # merged busy intervals (touching intervals merge)
    span_start_us: float = 0.0
    span_end_us: float = 0.0
    selection: str = "process_labels"   # or "category_fallback"
    gpu_pids: Tuple[Any, ...] = ()
    mm_patterns: Tuple[str, ...] = field(default=SEED_MM_PATTERNS)

    @property
    def span_us(self) -> float:
        return self.span_end_us - self.span_start_us

    def to_json_dict(self) -> dict:
        """The seven documented keys first, then the extras."""
        return {
            "busy_us": self.busy_us,
            "mm_busy_us": self.mm_busy_us,
            "total_us": self.total_us,
            "gpu_util": self.gpu_util,
            "mm_util": self.mm_util,
            "kernel_count": self.kernel_count,
            "total_source": self.total_source,
            "mm_kernel_count": self.mm_kernel_count,
            "busy_segments": self.busy_segments,
            "span_start_us": self.span_start_us,
            "span_end_us": self.span_end_us,
            "selection": self.selection,
            "gpu_pids": list(self.gpu_pids),
            "mm_patterns": list(self.mm_patterns),
        }


# --------------------------------------------------------------------------- the sweep

def _busy(sorted_events: Sequence[dict]) -> Tuple[float, int]:
    """Union length of [ts, ts+dur] over events already sorted (stably) by ts.

    Arithmetic in the seed's order, so that results agree with it bit for bit:
    the first event adds its ``dur``; every later one adds the part of
    [ts, ts+dur] that lies beyond the furthest end seen so far.  Also counts
    merged segments, where an event starting at or before that end (touching
    included) joins the current segment.
    """
    if not sorted_events:
        return 0, 0
    first = sorted_events[0]
    reach = first["ts"] + first["dur"]
    total = first["dur"]
    segments = 1
    for ev in sorted_events[1:]:
        ts = ev["ts"]
        end = ts + ev["dur"]
        if ts > reach:
            segments += 1
        lo = ts if ts > reach else reach
        if end > lo:
            total = total + (end - lo)
        if end > reach:
            reach = end
    return total, segments


def _compile(patterns: Iterable[str]) -> List["re.Pattern[str]"]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise ValueError(f"bad mm pattern {p!r}: {e}") from None
    return out


def analyze(trace: Any,
            total_us: Optional[float] = None,
            mm_patterns: Sequence[str] = SEED_MM_PATTERNS,
            *,
            exclude_categories: Sequence[str] = (),
            source: str = "<trace>") -> UtilResult:
    """Analyze a parsed trace (dict with ``traceEvents``, or a bare event list).

    total_us: wall time in µs; None -> the GPU span of the trace.
    mm_patterns: regular expressions (``re.search``, case-sensitive) on event names.
    exclude_categories: drop selected GPU events whose ``cat`` is one of these
        (case-insensitive), e.g. ``("gpu_user_annotation",)``.
    Raises TraceError (malformed) or NoGpuEventsError (no GPU events).
    """
    events = trace_events(trace, source)
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise TraceError(f"{source}: traceEvents[{i}] is a {type(ev).__name__}, not an object")
    if total_us is not None and (not is_number(total_us) or total_us <= 0):
        raise TraceError(f"{source}: total time must be a positive number of µs, got {total_us!r}")
    regexes = _compile(mm_patterns)
    gpu, pids, selection = gpu_events(events, exclude_categories, source)
    busy, segments = _busy(gpu)

    def is_mm(ev: dict) -> bool:
        name = ev.get("name")
        return isinstance(name, str) and any(r.search(name) for r in regexes)

    mm = [ev for ev in gpu if is_mm(ev)]
    mm_busy, _ = _busy(mm)

    start = min(ev["ts"] for ev in gpu)
    end = max(ev["ts"] + ev["dur"] for ev in gpu)
    if total_us is None:
        total = end - start
        total_source = "trace_span"
    else:
        total = total_us
        total_source = "argument"
    util = busy / total if total > 0 else None
    mm_util = mm_busy / total if total > 0 else None
    return UtilResult(
        busy_us=float(busy), mm_busy_us=float(mm_busy), total_us=float(total),
        gpu_util=None if util is None else float(util),
        mm_util=None if mm_util is None else float(mm_util),
        kernel_count=len(gpu), total_source=total_source,
        mm_kernel_count=len(mm), busy_segments=segments,
        span_start_us=float(start), span_end_us=float(end),
        selection=selection, gpu_pids=tuple(pids), mm_patterns=tuple(mm_patterns),
    )


def analyze_file(path: str, total_us: Optional[float] = None,
                 mm_patterns: Sequence[str] = SEED_MM_PATTERNS, *,
                 exclude_categories: Sequence[str] = ()) -> UtilResult:
    return analyze(load_trace(path), total_us, mm_patterns,
                   exclude_categories=exclude_categories, source=path)


# --------------------------------------------------------------------------- command

def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100.0 * x:6.2f}%"


def format_text(path: str, r: UtilResult) -> str:
    if r.selection == "process_labels":
        how = "pid(s) with a 'GPU' process label: " + ", ".join(map(str, r.gpu_pids))
    else:
        how = "fallback on cat (no 'GPU' process label in the trace)"
    if r.total_source == "argument":
        tsrc = "given"
    else:
        tsrc = "trace span: first GPU start to last GPU end"
    share = "n/a" if r.busy_us <= 0 else f"{100.0 * r.mm_busy_us / r.busy_us:.2f}% of busy"
    lines = [
        f"trace       {path}",
        f"gpu events  {r.kernel_count} ({how})",
        f"busy        {r.busy_us:14.3f} us   gpu_util {_pct(r.gpu_util)}   ({r.busy_segments} busy segment(s))",
        f"mm/conv     {r.mm_busy_us:14.3f} us   mm_util  {_pct(r.mm_util)}   "
        f"({r.mm_kernel_count} event(s), {share})",
        f"total       {r.total_us:14.3f} us   ({tsrc})",
        f"gpu span    {r.span_us:14.3f} us   [{r.span_start_us:.3f}, {r.span_end_us:.3f}]",
        f"mm patterns {' | '.join(r.mm_patterns) if r.mm_patterns else '(none)'}",
    ]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:     # one line, exit 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def _regex(s: str) -> str:
    try:
        re.compile(s)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"bad regular expression {s!r}: {e}")
    return s


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="opbench-trace",
        description="GPU utilization and mm/conv share from a Chrome trace "
                    "(torch.profiler / Kineto; .json or gzipped).",
        epilog="exit status: 0 ok, 1 no GPU events in a valid trace, 2 malformed trace or "
               "bad arguments. Rules: docs/trace_util.md")
    p.add_argument("trace", help="Chrome trace file (.json, .json.gz; gzip detected by content)")
    t = p.add_mutually_exclusive_group()
    t.add_argument("--total-us", type=float, metavar="US",
                   help="wall time of the traced region in µs (default: the trace's GPU span)")
    t.add_argument("--total-s", type=float, metavar="S",
                   help="the same in seconds, as the seed takes it (converted with * 1e6)")
    p.add_argument("--modern-patterns", action="store_true",
                   help="also count current mm/conv kernel names: " + ", ".join(MODERN_MM_PATTERNS))
    p.add_argument("--mm-pattern", action="append", default=[], type=_regex, metavar="REGEX",
                   help="add an mm/conv name pattern (Python regex, re.search, case-sensitive); repeatable")
    p.add_argument("--no-seed-patterns", action="store_true",
                   help="drop the seed's patterns (gemm, conv, cutlass, wgrad)")
    p.add_argument("--exclude-cat", action="append", default=[], metavar="CAT",
                   help="ignore GPU events of this category, e.g. gpu_user_annotation; repeatable")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return cli.run("opbench-trace", _main, argv)


def _main(argv: Optional[Sequence[str]]) -> int:
    args = build_parser().parse_args(argv)
    patterns: List[str] = [] if args.no_seed_patterns else list(SEED_MM_PATTERNS)
    if args.modern_patterns:
        patterns += [x for x in MODERN_MM_PATTERNS if x not in patterns]
    patterns += [x for x in args.mm_pattern if x not in patterns]
    total_us = args.total_us
    if args.total_s is not None:
        total_us = args.total_s * 1e6
    if total_us is not None and (not math.isfinite(total_us) or total_us <= 0):
        sys.stderr.write("opbench-trace: error: --total-us/--total-s must be a positive number\n")
        return 2
    try:
        r = analyze_file(args.trace, total_us, patterns, exclude_categories=args.exclude_cat)
    except NoGpuEventsError as e:
        sys.stderr.write(f"opbench-trace: {e}\n")
        return e.exit_code
    except TraceError as e:
        sys.stderr.write(f"opbench-trace: error: {e}\n")
        return e.exit_code
    if args.json:
        d = r.to_json_dict()
        d["trace"] = args.trace
        print(json.dumps(d))
    else:
        print(format_text(args.trace, r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
