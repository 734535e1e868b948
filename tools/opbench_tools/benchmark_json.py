"""Reads Google Benchmark JSON (bench_ops' or any Google Benchmark binary's) for opbench-compare and
opbench-gate.

A file becomes a Run: one Case per benchmark name, holding one value per repetition for every metric
(real_time and cpu_time in seconds, counters as written). Names are matched without the suffixes Google
Benchmark appends (`/iterations:1`, `/manual_time`, ...), so `LayerNorm/bf16/4096x8192/aten` is the key.
Iteration entries are used; aggregates (mean, median, stddev) only for a case that has no iteration
entries (a run made with --benchmark_report_aggregates_only). An entry with `error_occurred` or a truthy
`skipped` marks its case failed, with the message; a failed case never contributes a number.
Every problem with a file raises InputError with a message that names the file. Files are read within
json_input's size limit, the entries one at a time: a case keeps its values in arrays of doubles.
"""
from __future__ import annotations

import json
import math
import re
from array import array
from dataclasses import dataclass, field

from opbench_tools.json_input import InputError, parse_json_file, scan_json_file

TIME_METRICS = ("real_time", "cpu_time")
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Counters where a larger value is better; every other metric (times, instructions, unknown) is lower-better.
HIGHER_IS_BETTER = {"GB/s", "TFLOP/s", "%peak", "bytes_per_second", "items_per_second"}
# Metrics that do not vary between repetitions by construction (Callgrind instruction counts).
DETERMINISTIC = {"instructions"}
# Counters shown next to the compared metric (the derived throughput of the same measurement).
DERIVED_COUNTERS = ("GB/s", "TFLOP/s", "%peak", "bytes_per_second", "items_per_second")
# A repetition whose discarded (throttled) samples exceed this share of all it took is flagged
# (bench_ops' kThrottledShareFlag): its GPU ran below the throttle threshold of its rated clock.
THROTTLED_SHARE = 0.05
# Entry fields that are bookkeeping, not measurements.
STRUCTURAL = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
              "iterations"}
_GB_SUFFIX = re.compile(r"/(iterations:\d+|manual_time|real_time|process_time|min_time:[^/]+"
                        r"|min_warmup_time:[^/]+)(?=/|$)")


def successful_iterations(path: str) -> dict:
    """{case name: entry} of the successful iteration runs of a bench_ops JSON."""
    data = read_json(path)
    for i, entry in enumerate(data["benchmarks"]):
        check_entry(path, i, entry)
    return {b["name"]: b for b in data["benchmarks"]
            if b.get("run_type", "iteration") == "iteration" and not is_failed(b)}


def real_time_us(entry: dict) -> float:
    return entry["real_time"] * UNIT_SECONDS[entry["time_unit"]] * 1e6


def medians_us(path: str) -> dict:
    """{case name: real_time in microseconds} of the successful iteration runs of a bench_ops JSON."""
    return {name: real_time_us(b) for name, b in successful_iterations(path).items()}


def ceiling_stream(name: str):
    """'read', 'write' or 'copy' for a Ceiling stream case (ATen's `read` or our own `read_cuda`, with or
    without Google Benchmark's suffixes), else None. bench_ops takes the fastest stream of a kind as that
    kind's ceiling; readers of its JSON do the same."""
    parts = name.split("/")
    if len(parts) < 4 or parts[0] != "Ceiling":
        return None
    kind = parts[3][: -len("_cuda")] if parts[3].endswith("_cuda") else parts[3]
    return kind if kind in ("read", "write", "copy") else None


def stream_curves(figures) -> dict:
    """{'read'|'write'|'copy': {bytes moved: fastest GB/s}} from (case name, bytes moved, GB/s) triples:
    the Ceiling streams among them, the fastest of each kind and size kept as bench_ops' StreamCurve::record
    (lib/opbench/work.h) keeps it; other cases and figures without bytes are ignored."""
    curves = {}
    for name, nbytes, gbps in figures:
        kind = ceiling_stream(name)
        if kind and nbytes and gbps and nbytes > 0 and gbps > 0:
            curve = curves.setdefault(kind, {})
            curve[nbytes] = max(curve.get(nbytes, 0.0), gbps)
    return curves


def stream_gbps_at(curve: dict, nbytes: float):
    """GB/s of the stream of `curve` over `nbytes`, by bench_ops' rule (StreamCurve::gbps_at): the time
    interpolated linearly between recorded sizes, the smallest's GB/s below it, the last segment's
    marginal rate beyond the largest. None for an empty curve."""
    if not curve:
        return None
    sizes = sorted(curve)
    seconds = {b: b / (curve[b] * 1e9) for b in sizes}
    if nbytes <= sizes[0]:
        return curve[sizes[0]]
    if nbytes in curve:
        return curve[nbytes]
    if nbytes > sizes[-1]:
        if len(sizes) == 1:
            return curve[sizes[-1]]
        last, before = sizes[-1], sizes[-2]
        slope = (seconds[last] - seconds[before]) / (last - before)
        if not slope > 0:
            return curve[last]
        return nbytes / ((seconds[last] + (nbytes - last) * slope) * 1e9)
    above = next(b for b in sizes if b > nbytes)
    below = max(b for b in sizes if b < nbytes)
    f = (nbytes - below) / (above - below)
    return nbytes / (((1 - f) * seconds[below] + f * seconds[above]) * 1e9)


def higher_is_better(metric: str) -> bool:
    return metric in HIGHER_IS_BETTER or metric.endswith("/s") or metric.endswith("_per_second")


def metric_unit(metric: str) -> str:
    return "s" if metric in TIME_METRICS else metric


@dataclass
class Case:
    name: str
    values: dict = field(default_factory=dict)       # metric -> array('d') of a value per repetition
    aggregates: dict = field(default_factory=dict)   # aggregate name -> metric -> value
    aggregate_reps: int = 0                          # repetitions behind the aggregates
    error: str | None = None                         # why the case failed (any entry failed/skipped)
    broken: dict = field(default_factory=dict)       # time metric -> why a repetition's value is unusable
    label: str = ""

    def n(self, metric: str) -> int:
        """Repetitions available for `metric` (raw values, else the aggregates' repetition count)."""
        if metric in self.values:
            return len(self.values[metric])
        return self.aggregate_reps if metric in self.aggregates.get("median", self.aggregates.get("mean", {})) else 0

    def has(self, metric: str) -> bool:
        """True when the case measured `metric` (also when some of its values were unusable)."""
        return self.n(metric) > 0 or metric in self.broken

    def throttled_repetitions(self) -> int:
        """Repetitions in which more than THROTTLED_SHARE of the samples were discarded as throttled."""
        discarded, kept = self.values.get("throttled_samples", []), self.values.get("samples", [])
        return sum(1 for d, k in zip(discarded, kept) if d > THROTTLED_SHARE * (d + k))

    def metrics(self) -> set:
        found = set(self.values)
        for per_metric in self.aggregates.values():
            found |= set(per_metric)
        return found


@dataclass
class Run:
    path: str
    context: dict
    cases: dict          # name -> Case, in file order

    def max_repetitions(self) -> int:
        return max((max((len(v) for v in c.values.values()), default=c.aggregate_reps)
                    for c in self.cases.values()), default=0)

    def in_process_repetitions(self) -> bool:
        """Repetitions from one process (--benchmark_repetitions), not merged from one process each."""
        return self.max_repetitions() > 1 and "opbench_processes" not in self.context


def read_json(path: str) -> dict:
    """A Google Benchmark JSON file's top-level object; InputError naming the file (and line:column)."""
    entries: list = []
    data, streamed = scan_json_file(path, "benchmarks", lambda i, entry: entries.append(entry))
    if not isinstance(data, dict) or not streamed:
        raise InputError(f"{path}: not Google Benchmark JSON (expected an object with a 'benchmarks' list)")
    data["benchmarks"] = entries
    return data


def load_run(path: str) -> Run:
    """The file as a Run; each entry is checked and added to its case as it is parsed."""
    cases: dict = {}   # raw name -> Case, in file order

    def add(i: int, entry) -> None:
        check_entry(path, i, entry)
        raw = _raw_name(entry)
        _add_entry(path, cases.setdefault(raw, Case(raw)), entry)

    data, streamed = scan_json_file(path, "benchmarks", add)
    if not isinstance(data, dict) or not streamed:
        raise InputError(f"{path}: not Google Benchmark JSON (expected an object with a 'benchmarks' list)")
    for case in cases.values():
        if case.values:
            case.aggregates, case.aggregate_reps = {}, 0   # iterations win over aggregates
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    return Run(path, context, _strip_suffixes(cases))


def check_entry(path: str, i: int, entry) -> None:
    """InputError unless benchmarks[i] is an object with a string name, and (unless failed) a known time
    unit and numeric times."""
    where = f"{path}: benchmarks[{i}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise InputError(f"{where}: expected an object with a string 'name'")
    if is_failed(entry):
        return
    unit = entry.get("time_unit", "ns")
    if unit not in UNIT_SECONDS:
        raise InputError(f"{where} ({entry['name']!r}): unknown time_unit {_short(unit)}")
    for metric in TIME_METRICS:
        if metric in entry and not _is_number(entry[metric]):
            raise InputError(f"{where} ({entry['name']!r}): {metric} is not a number: {_short(entry[metric])}")


def is_failed(entry: dict) -> bool:
    return entry.get("error_occurred") is True or bool(entry.get("skipped"))


def failure_message(entry: dict) -> str:
    message = entry.get("error_message") or entry.get("skip_message") or ""
    kind = "skipped" if entry.get("skipped") and not entry.get("error_occurred") else "error"
    return f"{kind}: {message}" if message else kind


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _raw_name(entry: dict) -> str:
    if isinstance(entry.get("run_name"), str) and entry["run_name"]:
        return entry["run_name"]
    name, agg = entry["name"], entry.get("aggregate_name")
    if entry.get("run_type") == "aggregate" and isinstance(agg, str) and agg and name.endswith("_" + agg):
        return name[: -len(agg) - 1]
    return name


def _strip_suffixes(cases: dict) -> dict:
    """The cases keyed by their names without Google Benchmark's suffixes, unless stripping would merge
    distinct cases (then by their raw names)."""
    stripped = {raw: _GB_SUFFIX.sub("", raw) or raw for raw in cases}
    if len(set(stripped.values())) != len(stripped):
        return cases
    for raw, case in cases.items():
        case.name = stripped[raw]
    return {stripped[raw]: case for raw, case in cases.items()}


def _broken_times(entry: dict) -> dict:
    """{time metric: why} for the times of an iteration entry that cannot be a measurement (NaN, inf,
    zero or negative). A comparison on such a metric fails the case, never drops the repetition."""
    out = {}
    for key in TIME_METRICS:
        value = entry.get(key)
        if _is_number(value) and not (_finite(value) or 0) > 0:
            out[key] = (f"{key} is {_short(value)} in repetition {_short(entry.get('repetition_index', 0))} "
                        "(not a positive time)")
    return out


def finite_number(value) -> float | None:
    """A JSON number (not a bool) as a finite float; None for anything else."""
    return _finite(value) if _is_number(value) else None


def _finite(value) -> float | None:
    """A JSON number as a finite float; None for NaN, infinities and integers beyond a double's range."""
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _short(value, width: int = 40) -> str:
    text = repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30 else "a huge integer"
    return text if len(text) <= width else text[: width - 3] + "..."


def _count(value) -> int:
    """A repetition count from the file: a whole number of at least 1, else 1."""
    number = _finite(value) if _is_number(value) else None
    return int(number) if number is not None and 1 <= number <= 2**31 else 1


def _add_entry(path: str, case: Case, entry: dict) -> None:
    if is_failed(entry):
        case.error = case.error or failure_message(entry)
        return
    if entry.get("run_type", "iteration") == "iteration":   # kept per metric: it fails a comparison of that metric
        for metric, why in _broken_times(entry).items():
            case.broken.setdefault(metric, why)
    case.label = case.label or str(entry.get("label", ""))
    measured = _measurements(entry)
    if entry.get("run_type") == "aggregate":
        if entry.get("aggregate_unit") != "percentage":   # cv is a ratio, not a time; unused
            case.aggregates[str(entry.get("aggregate_name", ""))] = measured
        case.aggregate_reps = max(case.aggregate_reps, _count(entry.get("repetitions")))
        return
    for metric, value in measured.items():
        case.values.setdefault(metric, array("d")).append(value)


def _measurements(entry: dict) -> dict:
    scale = UNIT_SECONDS[entry.get("time_unit", "ns")]
    out = {}
    for key, value in entry.items():
        number = _finite(value) if _is_number(value) and key not in STRUCTURAL else None
        if number is not None:
            out[key] = number * scale if key in TIME_METRICS else number
    return out


def common_cases(old: Run, new: Run) -> tuple:
    """(names in both, names only in old, names only in new); InputError when nothing is shared."""
    both = [n for n in old.cases if n in new.cases]
    if not both:
        raise InputError(f"{old.path} and {new.path} have no benchmark names in common "
                         f"({len(old.cases)} vs {len(new.cases)} cases)")
    only_old = [n for n in old.cases if n not in new.cases]
    only_new = [n for n in new.cases if n not in old.cases]
    return both, only_old, only_new


def check_metric(old: Run, new: Run, names: list, metric: str) -> None:
    """InputError when no shared case has `metric` on both sides (a typo in --metric, most likely)."""
    if any(old.cases[n].has(metric) and new.cases[n].has(metric) for n in names):
        return
    if all(old.cases[n].error or new.cases[n].error for n in names):
        return   # every case failed: reported per case, not an input problem
    seen = sorted(set().union(*(old.cases[n].metrics() for n in names)))
    raise InputError(f"{old.path}, {new.path}: no common case has metric {metric!r}; "
                     f"metrics present: {', '.join(seen) or 'none'}")


def merge_runs(paths: list, out_path: str) -> None:
    """Writes one Google Benchmark JSON whose repetitions are the iteration entries of `paths`, in order
    (opbench-compare --binaries: one process per repetition)."""
    merged, context = [], {}
    for index, path in enumerate(paths):
        data = read_json(path)
        context = context or (data["context"] if isinstance(data.get("context"), dict) else {})
        for i, entry in enumerate(data["benchmarks"]):
            check_entry(path, i, entry)
            if entry.get("run_type") == "aggregate":
                continue
            entry = dict(entry, repetitions=len(paths), repetition_index=index)
            merged.append(entry)
    context = dict(context, opbench_processes=len(paths))   # the repetitions are separate processes
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"context": context, "benchmarks": merged}, f, indent=1)
