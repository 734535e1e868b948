#!/usr/bin/env python3
"""Writes docs/measured.md from records/.

A record is a folder records/<gpu>/<topic>/ with a README.md that starts with a title line, a blank line
and a fixed header of `- key: value` lines (gpu, date, sha and command at least), then prose. For each
record the page gets a heading, the header facts, tables computed from the record's CSV/JSON files (what
is tabulated depends on the topic), the prose, and the record's files with their sizes and SHA-256
prefixes, so that any edit to a record changes the page.

    python3 scripts/make_measured_doc.py            # rewrite docs/measured.md
    python3 scripts/make_measured_doc.py --check    # exit 1 if docs/measured.md is not up to date
    python3 scripts/make_measured_doc.py --stdout   # print the page

Standard library only; the output depends on the files alone (sorted walks, fixed number formats).
"""
import argparse
import csv
import hashlib
import json
import pathlib
import statistics
import sys

REQUIRED = ("gpu", "date", "sha", "command")
TOPIC_ORDER = ("sweep", "vs_inductor", "models", "stream_ceilings", "kernel_tune", "timers_vs_ncu",
               "gate_selftest", "compare", "reference_checks", "recheck", "collective", "instruction_counts")


class RecordError(Exception):
    """A record that the page cannot be made from (named in the message)."""


def parse_readme(path):
    """(title, [(key, value)], prose) of a record's README.md."""
    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith("# "):
        raise RecordError(f"{path}: the first line must be '# <title>'")
    facts, i = [], 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].startswith("- ") and ": " in lines[i]:
        key, value = lines[i][2:].split(": ", 1)
        facts.append((key.strip(), value.strip()))
        i += 1
    missing = [k for k in REQUIRED if k not in dict(facts)]
    if missing:
        raise RecordError(f"{path}: the header lacks {', '.join('- ' + k + ':' for k in missing)}")
    prose = "\n".join(("###" + line) if line.startswith("#") else line for line in lines[i:]).strip()
    return lines[0][2:].strip(), facts, prose


def num(value, digits=1):
    """A fixed-format number: `digits` decimals from 1 up, 3 significant digits below."""
    if value is None or value == "":
        return "-"
    v = float(value)
    return f"{v:.3g}" if abs(v) < 1 else f"{v:.{digits}f}"


def pct(value):
    return "-" if value is None else f"{value:+.1f}%"


def md_table(headers, rows):
    """A markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def read_csv(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def benchmarks(path):
    """{name: benchmark} of a Google Benchmark JSON file (the last entry of a name wins)."""
    return {b["name"]: b for b in json.loads(path.read_text())["benchmarks"]}


def rows_tables(folder):
    """Experiment rows (gpt_fast_benchmark.csv) and the run's Ceiling cases (bench_ops.json)."""
    rows = [[r["name"], r["dtype"], r["backend"], r["metric"], num(r["target"]), num(r["actual"]),
             num(r["pct_of_target"]), num(r["pct_of_ceiling"]), r["status"]]
            for r in read_csv(folder / "gpt_fast_benchmark.csv")]
    out = [md_table(["experiment", "dtype", "backend", "metric", "target", "actual", "% target", "% ceiling",
                     "status"], rows)]
    if (folder / "bench_ops.json").exists():
        ceil = [[name, num(b["real_time"], 2), num(b.get("GB/s")), num(b.get("TFLOP/s"))]
                for name, b in benchmarks(folder / "bench_ops.json").items() if name.startswith("Ceiling/")]
        out.append(md_table(["ceiling case", "us", "GB/s", "TFLOP/s"], ceil))
    return out


def vs_inductor_table(folder):
    """Medians over round*/: own kernel, ATen and inductor, and own vs inductor with its range."""
    rounds = [(benchmarks(r / "bench_ops.json"), json.loads((r / "compile.json").read_text())["median_us"])
              for r in sorted(folder.glob("round*"))]
    cases = [n[:-len("/cuda")] for n in rounds[0][0] if n.endswith("/cuda") and not n.startswith("Ceiling/")]
    rows = []
    for case in cases:
        own = [b[case + "/cuda"]["real_time"] for b, _ in rounds]
        inductor = [c[case + "/inductor"] for _, c in rounds]
        aten = [b[case + "/aten"]["real_time"] for b, _ in rounds if case + "/aten" in b]
        gbps = [b[case + "/cuda"]["GB/s"] for b, _ in rounds]
        per_round = [100 * (i / o - 1) for o, i in zip(own, inductor)]
        ratio = 100 * (statistics.median(inductor) / statistics.median(own) - 1)
        rows.append([case, num(statistics.median(own), 2), num(statistics.median(aten) if aten else None, 2),
                     num(statistics.median(inductor), 2), num(statistics.median(gbps), 0), pct(ratio),
                     f"{pct(min(per_round))} to {pct(max(per_round))}"])
    return [f"Medians over {len(rounds)} rounds; + means the own kernel is faster.",
            md_table(["case", "own us", "ATen us", "inductor us", "own GB/s", "own vs inductor",
                      "range over rounds"], rows)]


def models_tables(folder):
    """Decode rows of each run (models_rows.csv) and the Python reference (models_python.json)."""
    cxx, python = [], []
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        if (run / "models_rows.csv").exists():
            rows = read_csv(run / "models_rows.csv")
            value = {(r["name"], r["backend"], r["metric"]): r["actual"] for r in rows}
            for r in rows:
                if r["metric"] == "token_per_sec":
                    key = (r["name"], r["backend"])
                    cxx.append([run.name, r["name"], r["backend"], num(r["actual"]), num(r["pct_of_ceiling"]),
                                num(value.get(key + ("token_latency_p50(ms)",)), 2),
                                num(value.get(key + ("startup_time(s)",)), 2)])
        if (run / "models_python.json").exists():
            for r in json.loads((run / "models_python.json").read_text())["results"]:
                python.append([run.name, r["model"], r["backend"], num(r["tok_s"]), num(r["gbps"], 0),
                               num(r["startup_s"])])
    out = [md_table(["run", "model", "backend", "tok/s", "% of read bound", "p50 ms/token", "start-up s"], cxx)] if cxx else []
    if python:
        out.append(md_table(["run", "model", "Python backend", "tok/s", "GB/s", "start-up s"], python))
    return out


def stream_table(folder):
    """The fastest configuration of each stream kind (median over its rounds) and the spread of the rest."""
    by = {}
    for r in read_csv(folder / "stream.csv"):
        by.setdefault(r["kind"], {}).setdefault(r["config"], []).append((float(r["GBps"]), r["check"]))
    rows = []
    for kind, configs in by.items():
        medians = {c: statistics.median(g for g, _ in v) for c, v in configs.items()}
        best = max(medians, key=lambda c: (medians[c], c))
        ok = sum(check == "ok" for v in configs.values() for _, check in v)
        rows.append([kind, best, num(medians[best], 0), f"{num(min(medians.values()), 0)}-{num(medians[best], 0)}",
                     f"{ok} of {sum(len(v) for v in configs.values())}"])
    return [md_table(["stream", "fastest configuration", "GB/s", "every configuration, GB/s", "checks ok"], rows)]


def gate_table(folder):
    """A self-test's figures per case and slowdown, the record's parts (its JSON files: device calls run as
    one experiment, opbench-gate-selftest --combine) added up; the noise column is the largest part's."""
    files = sorted(folder.glob("*.json"))
    totals = {}
    for path in files:
        for case, c in json.loads(path.read_text())["cases"].items():
            for label, caught, rounds, changes in selftest_slowdowns(c):
                t = totals.setdefault((case, label), {"aa": 0, "aa_rounds": 0, "caught": 0, "rounds": 0,
                                                      "changes": [], "noise": 0.0})
                t["aa"] += c["aa_slower"] + c["aa_faster"]
                t["aa_rounds"] += c["aa_rounds"]
                t["caught"] += caught
                t["rounds"] += rounds
                t["changes"] += changes
                t["noise"] = max(t["noise"], c["smallest_reliable_slowdown_pct"])
    parts = ", ".join(p.stem for p in files)
    rows = [[parts, case, f"{t['aa']} of {t['aa_rounds']}", f"{t['caught']} of {t['rounds']}{label}",
             pct(statistics.median(t["changes"])), f"{t['noise']:.1f}%"] for (case, label), t in totals.items()]
    return [md_table(["files", "case", "A/A false alarms", "slowdown caught", "injected, as measured (median)",
                      "smallest reliably caught"], rows)]


def selftest_slowdowns(case):
    """(label, caught, rounds, measured changes) per injected slowdown (--slowdown) of a self-test case."""
    return [(f" at {pct_}%", s["caught"], s["rounds"], s["changes_pct"]) for pct_, s in case["slowdowns"].items()]


def timers_table(folder):
    rows = [[r["case"], num(r["ncu_us"], 2), num(r["cupti_us"], 2), pct(100 * (r["cupti_us"] / r["ncu_us"] - 1)),
             num(r["events_us"], 2), pct(100 * (r["events_us"] / r["ncu_us"] - 1)), num(r["graph_us"], 2),
             num(r["sm_clock_mhz"], 0), num(r["power_w"], 0), f"{r['throttled_samples']:.0f} of {r['samples']:.0f}"]
            for r in json.loads((folder / "timers_vs_ncu.json").read_text())]
    return [md_table(["case", "ncu us", "cupti us", "cupti vs ncu", "events us", "events vs ncu", "graph us",
                      "SM MHz", "power W", "throttled"], rows)]


def tune_table(folder):
    """Per case: the library's launch against the fastest configuration (medians over the r*.csv runs)."""
    times, checks, failed = {}, 0, 0
    for path in sorted(folder.glob("r*.csv")):
        for r in read_csv(path):
            times.setdefault((r["kind"], r["dtype"], r["case"]), {}).setdefault(r["config"], []).append(float(r["us"]))
            checks += 1
            failed += r["check"] != "ok"
    rows = []
    for (kind, dtype, case), configs in times.items():
        med = {c: statistics.median(v) for c, v in configs.items()}
        best = min(med, key=lambda c: (med[c], c))
        launch = med.get("launch")
        rows.append([f"{dtype} {case}", num(launch, 2), best, num(med[best], 2),
                     pct(100 * (launch / med[best] - 1)) if launch else "-"])
    return [f"{len(times)} cases, {checks} timed configurations, {failed} failed checks.",
            md_table(["case", "launch us", "fastest configuration", "its us", "its gain over the launch"], rows)]


def median_times(path):
    runs = {}
    for b in json.loads(path.read_text())["benchmarks"]:
        runs.setdefault(b["name"], []).append(b["real_time"])
    return {n: statistics.median(v) for n, v in runs.items()}


def compare_tables(folder):
    old, new = median_times(folder / "aa_old.json"), median_times(folder / "aa_new.json")
    aa = [100 * (new[n] / old[n] - 1) for n in old if n in new]
    cold, warm = median_times(folder / "ab_cold.json"), median_times(folder / "ab_warm.json")
    rows = [[n, num(cold[n], 2), num(warm[n], 2), pct(100 * (warm[n] / cold[n] - 1))] for n in cold if n in warm]
    return [f"A/A: {len(aa)} cases, medians of the two sides {min(aa):+.1f}% to {max(aa):+.1f}% apart.",
            md_table(["A/B case", "cold us (median)", "warm us (median)", "change"], rows)]


def reference_tables(folder):
    ours = benchmarks(folder / "seed_aten.json")
    eager = json.loads((folder / "eager.json").read_text())["median_us"]
    rows = [[n, num(ours[n]["real_time"], 2), num(e, 2), pct(100 * (ours[n]["real_time"] / e - 1))]
            for n, e in eager.items() if n in ours]
    replay = [[r["operator"], r["inputs_run"], num(r["graph 50th"], 2), r["accuracy"], r["status"]]
              for r in read_csv(folder / "replay_bert.csv")]
    return [md_table(["case", "bench_ops us", "eager us", "bench_ops vs eager"], rows),
            md_table(["replayed operator", "inputs run", "graph speedup, median", "accuracy", "status"], replay)]


def instr_tables(folder):
    def counts(name):
        return {b["name"]: b["instructions"] for b in json.loads((folder / name).read_text())["benchmarks"]}
    one, two = counts("run1.json"), counts("run2.json")
    diffs = [abs(two[n] / one[n] - 1) * 100 for n in one if n in two and one[n]]
    same = sum(one[n] == two.get(n) for n in one)
    out = [f"run1 against run2: {len(diffs)} counts, {same} identical, largest difference {max(diffs):.4f}%."]
    for path in sorted(folder.glob("ab_*.json")):
        ab = counts(path.name)
        moved = [[n, num(one[n], 0), num(ab[n], 0), pct(100 * (ab[n] / one[n] - 1))]
                 for n in one if n in ab and one[n] and abs(ab[n] / one[n] - 1) > 0.001]
        out.append(md_table([f"moved past 0.1% in {path.stem}", "run1", "A/B", "change"], moved))
    return out


TABLES = {"sweep": rows_tables, "recheck": rows_tables, "vs_inductor": vs_inductor_table, "models": models_tables,
          "stream_ceilings": stream_table, "gate_selftest": gate_table, "timers_vs_ncu": timers_table,
          "kernel_tune": tune_table, "compare": compare_tables, "reference_checks": reference_tables,
          "instruction_counts": instr_tables}


def file_lines(folder, root):
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "README.md"):
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        out.append(f"- [{path.relative_to(folder).as_posix()}](../{rel}) "
                   f"({len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:12]})")
    return out


def record_section(folder, root):
    title, facts, prose = parse_readme(folder / "README.md")
    tables = TABLES.get(folder.name)
    try:
        blocks = tables(folder) if tables else []
    except (OSError, KeyError, ValueError, ZeroDivisionError, statistics.StatisticsError) as e:
        raise RecordError(f"{folder}: cannot tabulate ({type(e).__name__}: {e})") from e
    rel = folder.relative_to(root).as_posix()
    head = [f"### {title}", "", f"Record: [`{rel}/`](../{rel}/)", ""]
    head += [f"- **{k}**: `{v}`" if k == "command" else f"- **{k}**: {v}" for k, v in facts]
    parts = ["\n".join(head)] + blocks + [prose, "Files:\n\n" + "\n".join(file_lines(folder, root))]
    return "\n\n".join(p for p in parts if p)


def topic_key(folder):
    name = folder.name
    return (TOPIC_ORDER.index(name) if name in TOPIC_ORDER else len(TOPIC_ORDER), name)


def render(root):
    root = pathlib.Path(root)
    gpus = sorted(p for p in (root / "records").iterdir() if p.is_dir())
    out = ["# Measured", "",
           "Generated by `scripts/make_measured_doc.py` from `records/`: do not edit this page; edit a record",
           "(its README.md header and prose, its raw files) and run `python3 scripts/make_measured_doc.py`.",
           "`tests/python/test_measured_doc.py` fails when the two disagree. Each record is the latest accepted",
           "run of its topic on its GPU; ideas tried and dropped, and the figures behind choices, are in",
           "[decisions.md](decisions.md).", "",
           "| record | gpu | date | sha |", "|---|---|---|---|"]
    sections = []
    for gpu in gpus:
        folders = sorted((p for p in gpu.iterdir() if (p / "README.md").is_file()), key=topic_key)
        if not folders:
            continue
        sections.append(f"## {gpu.name.replace('_', ' ')}")
        for folder in folders:
            facts = dict(parse_readme(folder / "README.md")[1])
            rel = folder.relative_to(root).as_posix()
            out.append(f"| [`{rel}`](../{rel}/) | {facts['gpu']} | {facts['date']} | {facts['sha']} |")
            sections.append(record_section(folder, root))
    return "\n".join(out) + "\n\n" + "\n\n".join(sections) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        help="repository root (default: this script's parent's parent)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if docs/measured.md is not up to date")
    mode.add_argument("--stdout", action="store_true", help="print the page instead of writing it")
    args = parser.parse_args(argv)
    try:
        page = render(args.root)
    except RecordError as e:
        print(f"make_measured_doc: {e}", file=sys.stderr)
        return 2
    target = pathlib.Path(args.root) / "docs" / "measured.md"
    if args.stdout:
        sys.stdout.write(page)
    elif args.check:
        if not target.exists() or target.read_text() != page:
            print(f"make_measured_doc: {target} is not what records/ gives: run "
                  "python3 scripts/make_measured_doc.py", file=sys.stderr)
            return 1
    else:
        target.write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
