#!/usr/bin/env python3
"""The speed-of-light acceptance table: own kernels against torch.compile, over alternating rounds.

  own_kernels_vs_inductor.py ROUND_DIR [ROUND_DIR ...] [--markdown OUT.md]

Each ROUND_DIR holds one round of gpu_session.sh's vs_inductor step: bench_ops.json (bench_ops, the
cases below and the Ceiling rows) and compile.json (torch_compile_timings.py), run one after the other.
A case's time moves from one process to the next by more than the gaps judged here (between rounds of
one call: up to 4.3% for the own kernels, up to 48% for inductor's), so the rounds alternate
the two processes and each figure is the median over the rounds.

Per own-kernel case of the rounds' bench_ops.json (backend `cuda`, the Ceiling streams aside; the step
runs the norm families bf16 4096 x D and Gemv and GatherGemv bf16 and int8 D x D, D = 1024, 4096, 8192,
16384), in bench_ops' order: the medians of the own kernel (`cuda`), ATen and inductor in us; the own
kernel's GB/s (the case's bytes over its median time) and its share of the matching ceiling (norms, the
families named *Norm, read and write: copy; the rest read: read). The ceiling of a case is its stream
at the case's own byte count, as bench_ops holds it (lib/opbench/work.h, StreamCurve: the Ceiling
streams run at 16 MiB to 1 GiB, the fastest of a kind and size kept, sizes between interpolated), the
median over the rounds; beside it the share of the largest stream (1 GiB), which a case of fewer bytes
cannot reach (a stream's fixed cost). Own vs inductor (inductor / own - 1 of the medians: + means the
own kernel is faster) and its range over the rounds.
Then the acceptance criteria, each met or not with its figure:
  - own >= inductor at D >= 4096, within 5% at D = 1024;
  - GEMVs at D = 16384 >= 95% of read; norms at D >= 8192 >= 90% of copy.
Exit status 0 with the table; 2 with one line naming the file on unusable input.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

from opbench_tools import benchmark_json

CEILING = "Ceiling/bf16/32768x16384/"   # the 1 GiB streams
AHEAD_FROM_DIM, NEAR_DIM, NEAR_PCT = 4096, 1024, 5.0
GEMV_READ_PCT, NORM_COPY_PCT = 95.0, 90.0


def case_names(rounds):
    """(case name without backend, is a norm, D: the shape's last number) of every own-kernel case in the
    rounds' bench_ops.json, failed ones too, in the order bench_ops ran them."""
    seen = {}
    for r in rounds:
        for name in r[2]:
            parts = name.split("/")
            width = parts[2].split("x")[-1] if len(parts) == 4 else ""
            if parts[-1] == "cuda" and parts[0] != "Ceiling" and width.isdigit():
                seen.setdefault("/".join(parts[:3]), (parts[0].endswith("Norm"), int(width)))
    for name, (norm, dim) in seen.items():
        yield name, norm, dim


def read_round(folder: pathlib.Path):
    """({bench_ops case: (us, bytes)}, {compile case: us}, [every bench_ops case run, failed ones too]) of
    one round; InputError naming the file."""
    bench_path, compile_path = folder / "bench_ops.json", folder / "compile.json"
    ours = {name: (benchmark_json.real_time_us(b), b.get("bytes"))
            for name, b in benchmark_json.successful_iterations(str(bench_path)).items()}
    ran = [b["name"] for b in benchmark_json.read_json(str(bench_path))["benchmarks"]
           if b.get("run_type", "iteration") == "iteration"]
    compiled = benchmark_json.parse_json_file(str(compile_path))
    if not isinstance(compiled, dict) or not isinstance(compiled.get("median_us"), dict):
        raise benchmark_json.InputError(f"{compile_path}: expected torch_compile_timings.py's JSON (a 'median_us' object)")
    return ours, compiled["median_us"], ran


def median_of(rounds, pick):
    values = [v for v in (pick(r) for r in rounds) if v is not None]
    return statistics.median(values) if values else None


def ceilings(rounds):
    """[{'read'|'write'|'copy': {bytes: GB/s}}] a round: each kind's fastest stream of each size."""
    return [benchmark_json.stream_curves((name, nbytes, nbytes / us / 1e3) for name, (us, nbytes) in r[0].items()
                                          if us and nbytes) for r in rounds]


def ceiling_gbps(curves, kind, nbytes):
    """The median over the rounds of the `kind` stream's GB/s at `nbytes` (None where none ran)."""
    values = [benchmark_json.stream_gbps_at(c.get(kind, {}), nbytes) for c in curves]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def largest_gbps(curves, kind):
    """The median over the rounds of the `kind` stream's GB/s at its largest size."""
    values = [c[kind][max(c[kind])] for c in curves if c.get(kind)]
    return statistics.median(values) if values else None


def rows(rounds, curves):
    """One dict a case: the medians, GB/s, % of its ceiling (`curves`: ceilings(rounds)) and of the
    largest stream, own vs inductor and its range."""
    for name, norm, dim in case_names(rounds):
        own = median_of(rounds, lambda r: (r[0].get(name + "/cuda") or (None,))[0])
        aten = median_of(rounds, lambda r: (r[0].get(name + "/aten") or (None,))[0])
        inductor = median_of(rounds, lambda r: r[1].get(name + "/inductor"))
        nbytes = next((r[0][name + "/cuda"][1] for r in rounds if name + "/cuda" in r[0]), None)
        per_round = [r[1][name + "/inductor"] / r[0][name + "/cuda"][0] * 100 - 100 for r in rounds
                     if name + "/cuda" in r[0] and name + "/inductor" in r[1]]
        kind = "copy" if norm else "read"
        gbps = nbytes / own / 1e3 if own and nbytes else None
        bound = ceiling_gbps(curves, kind, nbytes) if nbytes else None
        largest = largest_gbps(curves, kind)
        yield {"case": name, "norm": norm, "dim": dim, "own_us": own, "aten_us": aten, "inductor_us": inductor,
               "gbps": gbps, "ceiling": kind, "ceiling_gbps": bound,
               "ceiling_pct": gbps / bound * 100 if gbps and bound else None,
               "largest_pct": gbps / largest * 100 if gbps and largest else None,
               "vs_inductor_pct": inductor / own * 100 - 100 if own and inductor else None,
               "range_pct": (min(per_round), max(per_round)) if per_round else None}


def size_text(nbytes):
    mib = nbytes / 2 ** 20
    return f"{mib / 1024:g} GiB" if mib >= 1024 else f"{mib:g} MiB"


def ceilings_text(curves):
    """'read: 16 MiB 2890, 1 GiB 4611 GB/s; copy: ...', each figure the median over the rounds."""
    parts = []
    for kind in ("read", "write", "copy"):
        sizes = sorted({b for c in curves for b in c.get(kind, {})})
        if sizes:
            parts.append(f"{kind}: " + ", ".join(
                f"{size_text(b)} {statistics.median(c[kind][b] for c in curves if b in c.get(kind, {})):.0f}"
                for b in sizes) + " GB/s")
    return "; ".join(parts) if parts else "none measured"


def fmt(value, spec, suffix=""):
    return "–" if value is None else f"{value:{spec}}{suffix}"


def criteria(row):
    """[(criterion, met or None when not measured, the figure as shown)] that apply to a row."""
    out = []
    vs, pct = row["vs_inductor_pct"], row["ceiling_pct"]
    if row["dim"] >= AHEAD_FROM_DIM:
        out.append(("own >= inductor", None if vs is None else vs >= 0, fmt(vs, "+.1f", "%")))
    elif row["dim"] == NEAR_DIM:
        out.append((f"own within {NEAR_PCT:g}% of inductor", None if vs is None else vs >= -NEAR_PCT,
                    fmt(vs, "+.1f", "%")))
    if row["norm"] and row["dim"] >= 8192:
        out.append((f">= {NORM_COPY_PCT:g}% of copy", None if pct is None else pct >= NORM_COPY_PCT,
                    fmt(pct, ".1f", "%")))
    if not row["norm"] and row["dim"] == 16384:
        out.append((f">= {GEMV_READ_PCT:g}% of read", None if pct is None else pct >= GEMV_READ_PCT,
                    fmt(pct, ".1f", "%")))
    return out


def table(rounds) -> str:
    curves = ceilings(rounds)
    lines = [f"Medians over {len(rounds)} rounds. Ceilings by stream size: {ceilings_text(curves)}.", "",
             "| case | own us | ATen us | inductor us | own GB/s | ceiling GB/s | % of ceiling | % of 1 GiB stream "
             "| own vs inductor | range over rounds |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for row in rows(rounds, curves):
        rng = row["range_pct"]
        lines.append(f"| {row['case']} | {fmt(row['own_us'], '.2f')} | {fmt(row['aten_us'], '.2f')} | "
                     f"{fmt(row['inductor_us'], '.2f')} | {fmt(row['gbps'], '.0f')} | "
                     f"{row['ceiling']} {fmt(row['ceiling_gbps'], '.0f')} | "
                     f"{fmt(row['ceiling_pct'], '.1f', '% ' + row['ceiling'])} | {fmt(row['largest_pct'], '.1f', '%')} | "
                     f"{fmt(row['vs_inductor_pct'], '+.1f', '%')} | "
                     f"{'–' if rng is None else f'{rng[0]:+.1f} to {rng[1]:+.1f}%'} |")
        verdicts += [(row["case"],) + c for c in criteria(row)]
    met = [v for v in verdicts if v[2]]
    lines += ["", f"Criteria met: {len(met)} of {len(verdicts)}."]
    for case, what, ok, figure in verdicts:
        if not ok:
            lines.append(f"- not measured: {case}, {what}" if ok is None else f"- not met: {case}, {what} ({figure})")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="+", help="round folders, each with bench_ops.json and compile.json")
    parser.add_argument("--markdown", help="also write the table here")
    args = parser.parse_args(argv)
    try:
        rounds = [read_round(pathlib.Path(folder)) for folder in args.rounds]
    except benchmark_json.InputError as error:
        print(f"own_kernels_vs_inductor.py: {error}", file=sys.stderr)
        return 2
    text = table(rounds)
    sys.stdout.write(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
