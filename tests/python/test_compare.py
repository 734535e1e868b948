"""opbench-compare and its shared modules (benchmark_json, stats): loading, statistics,
verdicts, outputs and the binaries mode, on small Google-Benchmark-shaped JSON files."""
import json
import stat
import subprocess
import sys

import pytest

from opbench_tools import benchmark_json as results
from opbench_tools import compare, stats

from fake_bench import FAKE_BENCH, path_with_this_python

SLOW = [100.0, 100.3, 99.8, 100.1, 99.9, 100.2, 100.0, 99.7, 100.4, 100.1]


def entry(name, value, rep=0, reps=1, unit="us", suffix="/iterations:1/manual_time", **counters):
    full = name + suffix
    e = {"name": full, "run_name": full, "run_type": "iteration", "repetitions": reps,
         "repetition_index": rep, "threads": 1, "iterations": 1, "real_time": value,
         "cpu_time": value / 2, "time_unit": unit, "label": "timer=events cache=cold"}
    e.update(counters)
    return e


def write_run(path, cases, unit="us"):
    """cases: name -> list of real_time values (one per repetition) or an error message string."""
    out = []
    for name, values in cases.items():
        if isinstance(values, str):
            out.append(dict(entry(name, 0, unit=unit), error_occurred=True, error_message=values))
            continue
        for i, v in enumerate(values):
            out.append(entry(name, v, i, len(values), unit, **{"GB/s": 1000.0 / v, "TFLOP/s": 0.0}))
    path.write_text(json.dumps({"context": {"executable": "bench_ops"}, "benchmarks": out}))
    return str(path)


def scaled(values, factor):
    return [v * factor for v in values]


def run_main(argv, capsys):
    code = compare.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- loading
def test_load_strips_gbench_suffixes_groups_repetitions_and_converts_units(tmp_path):
    path = write_run(tmp_path / "a.json", {"LayerNorm/bf16/4096x8192/aten": [60.0, 61.0, 59.0]}, unit="ms")
    run = results.load_run(path)
    case = run.cases["LayerNorm/bf16/4096x8192/aten"]
    assert list(case.values["real_time"]) == pytest.approx([0.060, 0.061, 0.059])
    assert list(case.values["GB/s"]) == pytest.approx([1000 / 60, 1000 / 61, 1000 / 59])
    assert "repetition_index" not in case.values and "iterations" not in case.values
    assert run.max_repetitions() == 3


def test_failed_and_skipped_entries_mark_the_case_failed_never_a_number(tmp_path):
    data = {"benchmarks": [
        dict(entry("A/bf16/1/aten", 5.0), error_occurred=True, error_message="out of memory"),
        dict(entry("B/bf16/1/aten", 5.0), skipped=True, skip_message="needs sm_90"),   # Google Benchmark 1.8
        entry("C/bf16/1/aten", 5.0)]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    run = results.load_run(str(path))
    assert run.cases["A/bf16/1/aten"].error == "error: out of memory"
    assert run.cases["B/bf16/1/aten"].error == "skipped: needs sm_90"
    assert run.cases["A/bf16/1/aten"].values == {} and run.cases["C/bf16/1/aten"].error is None
    comp = stats.compare_runs(run, run)
    verdicts = {c.name: c.verdict for c in comp.cases}
    assert verdicts["A/bf16/1/aten"] == "FAILED" and verdicts["B/bf16/1/aten"] == "FAILED"
    failed = next(c for c in comp.cases if c.name == "A/bf16/1/aten")
    assert failed.change is None and failed.failed == ("old", "new") and "out of memory" in failed.note


def test_aggregates_used_only_when_no_iterations(tmp_path):
    def agg(name, kind, value):
        return {"name": f"{name}_{kind}", "run_name": name, "run_type": "aggregate", "repetitions": 10,
                "aggregate_name": kind, "real_time": value, "cpu_time": value, "time_unit": "ns"}
    old = {"benchmarks": [agg("BM_x", "mean", 100.0), agg("BM_x", "median", 100.0), agg("BM_x", "stddev", 0.5)]}
    new = {"benchmarks": [agg("BM_x", "mean", 110.0), agg("BM_x", "median", 110.0), agg("BM_x", "stddev", 0.5)]}
    (tmp_path / "o.json").write_text(json.dumps(old))
    (tmp_path / "n.json").write_text(json.dumps(new))
    comp = stats.compare_runs(results.load_run(str(tmp_path / "o.json")), results.load_run(str(tmp_path / "n.json")))
    (case,) = comp.cases
    assert case.old.median == pytest.approx(100e-9) and case.old.n == 10
    assert case.test == "welch" and case.p_value < 1e-6 and case.verdict == "SLOWER"
    # with iteration entries present, aggregates are ignored
    mixed = {"benchmarks": [entry("BM_x", 1.0, suffix=""), agg("BM_x", "median", 999.0)]}
    (tmp_path / "m.json").write_text(json.dumps(mixed))
    case = results.load_run(str(tmp_path / "m.json")).cases["BM_x"]
    assert list(case.values["real_time"]) == [1e-6] and case.aggregates == {}


@pytest.mark.parametrize("content, expected", [
    (None, "no such file"),
    ('{"benchmarks": [\n  {"name": "x",}\n]}', ":2:16: malformed JSON"),
    ('{"context": {}}', "not Google Benchmark JSON"),
    ('{"benchmarks": [{"real_time": 1}]}', "benchmarks[0]: expected an object with a string 'name'"),
])
def test_unusable_input_exits_2_naming_the_file(tmp_path, capsys, content, expected):
    good = write_run(tmp_path / "good.json", {"A/x/1/y": SLOW})
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    code, out, err = run_main([good, str(bad)], capsys)
    assert code == 2 and out == ""
    assert str(bad) in err and expected in err


def test_no_common_cases_and_unknown_metric_exit_2(tmp_path, capsys):
    a = write_run(tmp_path / "a.json", {"A/x/1/y": SLOW})
    b = write_run(tmp_path / "b.json", {"B/x/1/y": SLOW})
    code, _, err = run_main([a, b], capsys)
    assert code == 2 and "no benchmark names in common" in err
    code, _, err = run_main([a, a, "--metric", "GB/S"], capsys)
    assert code == 2 and "no common case has metric 'GB/S'" in err and "GB/s" in err


# ---------------------------------------------------------------- statistics and verdicts
def test_verdicts_slower_faster_same(tmp_path):
    old = {"Slow/x/1/y": SLOW, "Fast/x/1/y": SLOW, "Same/x/1/y": SLOW}
    new = {"Slow/x/1/y": scaled(SLOW[::-1], 1.05), "Fast/x/1/y": scaled(SLOW, 0.9),
           "Same/x/1/y": scaled(SLOW[::-1], 1.002)}
    comp = stats.compare_runs(results.load_run(write_run(tmp_path / "o.json", old)),
                              results.load_run(write_run(tmp_path / "n.json", new)))
    by = {c.name: c for c in comp.cases}
    assert by["Slow/x/1/y"].verdict == "SLOWER" and by["Slow/x/1/y"].change == pytest.approx(0.05, abs=1e-3)
    assert by["Slow/x/1/y"].p_value < 1e-3 and by["Slow/x/1/y"].test == "mann-whitney"
    assert by["Fast/x/1/y"].verdict == "FASTER" and by["Fast/x/1/y"].change == pytest.approx(-0.1, abs=1e-3)
    assert by["Same/x/1/y"].verdict == "SAME"
    assert by["Slow/x/1/y"].counters["GB/s"]["change"] == pytest.approx(1 / 1.05 - 1, abs=1e-3)
    assert comp.geomean_change == pytest.approx((1.05 * 0.9 * 1.002) ** (1 / 3) - 1, abs=1e-3)


def test_throughput_metric_is_higher_is_better_and_change_matches_time(tmp_path):
    old = write_run(tmp_path / "o.json", {"A/x/1/y": SLOW})
    new = write_run(tmp_path / "n.json", {"A/x/1/y": scaled(SLOW, 1.05)})
    by_time = stats.compare_runs(results.load_run(old), results.load_run(new)).cases[0]
    by_gbps = stats.compare_runs(results.load_run(old), results.load_run(new), metric="GB/s").cases[0]
    assert by_gbps.verdict == by_time.verdict == "SLOWER"
    assert by_gbps.change == pytest.approx(by_time.change)   # GB/s fell 4.8% == time rose 5%
    assert results.higher_is_better("TFLOP/s") and results.higher_is_better("tokens/s")
    assert not results.higher_is_better("instructions") and not results.higher_is_better("real_time")


def test_noisy_case_is_noisy_and_few_repetitions_are_unsure_with_a_warning(tmp_path):
    noisy = [100, 130, 85, 110, 95, 140, 90, 120, 80, 105]
    old = write_run(tmp_path / "o.json", {"N/x/1/y": noisy, "Few/x/1/y": [100.0, 100.2, 99.9]})
    new = write_run(tmp_path / "n.json", {"N/x/1/y": scaled(noisy[::-1], 1.06), "Few/x/1/y": [110.0, 110.1, 109.8]})
    comp = stats.compare_runs(results.load_run(old), results.load_run(new))
    by = {c.name: c for c in comp.cases}
    assert by["N/x/1/y"].verdict == "NOISY" and by["N/x/1/y"].spread > 0.05
    assert by["Few/x/1/y"].verdict == "UNSURE" and by["Few/x/1/y"].p_value >= 0.05
    assert any("fewer than 9 repetitions" in w for w in comp.warnings)


def test_deterministic_metric_needs_no_test(tmp_path):
    def run(path, count):
        es = [dict(entry("Stmt/add/eager", 1.0, rep=i, reps=3, suffix=""), instructions=count) for i in range(3)]
        path.write_text(json.dumps({"benchmarks": es}))
        return results.load_run(str(path))
    base = run(tmp_path / "o.json", 1_000_000)
    case = stats.compare_runs(base, run(tmp_path / "n.json", 1_040_000), metric="instructions").cases[0]
    assert case.test == "deterministic" and case.p_value is None and case.verdict == "SLOWER"
    case = stats.compare_runs(base, run(tmp_path / "s.json", 1_010_000), metric="instructions").cases[0]
    assert case.verdict == "SAME"


def test_qn_scale_estimates_the_standard_deviation():
    import numpy as np
    x = list(np.random.default_rng(3).normal(0, 2.0, 300))
    assert stats.qn_scale(x) == pytest.approx(2.0, rel=0.1)
    assert stats.qn_scale(x + [1e6, -1e6]) == pytest.approx(2.0, rel=0.12)   # robust to outliers


# ---------------------------------------------------------------- outputs
@pytest.fixture
def pair(tmp_path):
    old = {"LayerNorm/bf16/4096x8192/aten": SLOW, "Gemv/bf16/4096/aten": SLOW, "Broken/x/1/y": SLOW}
    new = {"LayerNorm/bf16/4096x8192/aten": scaled(SLOW, 1.06), "Gemv/bf16/4096/aten": SLOW,
           "Broken/x/1/y": "CUDA error: an illegal memory access"}
    return write_run(tmp_path / "base.json", old), write_run(tmp_path / "head.json", new)


def test_console_table_and_colour(pair, capsys):
    code, out, _ = run_main(list(pair) + ["--color", "never"], capsys)
    assert code == 0 and "\033[" not in out
    line = next(l for l in out.splitlines() if l.startswith("LayerNorm/bf16/4096x8192/aten"))
    assert "  100 us" in line and "106.1 us" in line and "+6.0%" in line and line.endswith("SLOWER")
    assert "GB/s" in out and "TFLOP/s" not in out             # all-zero counters get no column
    assert "illegal memory access" in out and "geomean" in out
    _, out, _ = run_main(list(pair) + ["--color", "always"], capsys)
    assert "\033[31m" in out and "\033[35m" in out


def test_markdown_json_and_plot(pair, tmp_path, capsys):
    md, js, png = tmp_path / "c.md", tmp_path / "c.json", tmp_path / "c.png"
    code, out, _ = run_main(list(pair) + ["--markdown", str(md), "--json", str(js), "--plot", str(png)], capsys)
    assert code == 0 and "SLOWER" in out
    text = md.read_text()
    assert "| `LayerNorm/bf16/4096x8192/aten` |" in text and "🔴 SLOWER" in text
    assert text.index("FAILED") < text.index("SLOWER") < text.index("<details>")   # worst first, same folded
    data = json.loads(js.read_text())
    case = next(c for c in data["cases"] if c["name"].startswith("LayerNorm"))
    assert case["verdict"] == "SLOWER" and case["change_pct"] == pytest.approx(6.0, abs=0.1)
    assert case["old"]["n"] == 10 and case["p_value"] < 0.01 and "GB/s" in case["counters"]
    assert data["counts"] == {"SLOWER": 1, "SAME": 1, "FAILED": 1}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_markdown_to_stdout_replaces_the_console_table(pair, capsys):
    code, out, _ = run_main(list(pair) + ["--markdown", "-"], capsys)
    assert code == 0 and out.startswith("### opbench compare") and "----" not in out


def test_help_is_clear():
    out = subprocess.run([sys.executable, "-m", "opbench_tools.compare", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for word in ("--metric", "--markdown", "--json", "--plot", "--binaries", "Mann-Whitney", "NOISY"):
        assert word in out


# ---------------------------------------------------------------- binaries mode
FAKE_BINARY = """#!{python}
import json, sys
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
with open({log!r}, "a") as f:
    f.write({side!r} + "\\n")
t = {time}
entries = [{{"name": "K/x/1/y/manual_time", "run_name": "K/x/1/y/manual_time", "run_type": "iteration",
            "repetitions": 1, "repetition_index": 0, "iterations": 1, "real_time": t, "cpu_time": t,
            "time_unit": "us"}}]
json.dump({{"context": {{}}, "benchmarks": entries}}, open(args["--benchmark_out"], "w"))
"""


def test_binaries_mode_runs_interleaved_and_merges(tmp_path, capsys):
    log = tmp_path / "order.log"
    bins = []
    for side, time in (("old", "100.0 + len(open(%r).read())" % str(log)), ("new", "200.0")):
        path = tmp_path / f"{side}_bench"
        path.write_text(FAKE_BINARY.format(python=sys.executable, log=str(log), side=side, time=time))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        bins.append(str(path))
    out_dir = tmp_path / "runs"
    code, out, err = run_main(["--binaries", *bins, "--filter", "K/", "--repetitions", "3",
                               "--out-dir", str(out_dir), "--color", "never"], capsys)
    assert code == 0, err
    assert log.read_text().split() == ["old", "new"] * 3
    assert str(out_dir) in err
    merged = json.loads((out_dir / "old.json").read_text())["benchmarks"]
    assert [e["repetition_index"] for e in merged] == [0, 1, 2]
    assert "K/x/1/y" in out and "SLOWER" not in out            # 3 repetitions: UNSURE, not SLOWER
    assert "UNSURE" in out and "fewer than 9 repetitions" in out


def test_binaries_mode_failing_binary_exits_2(tmp_path, capsys):
    code, _, err = run_main(["--binaries", "/bin/false", "/bin/false", "--repetitions", "1",
                             "--out-dir", str(tmp_path)], capsys)
    assert code == 2 and "/bin/false" in err and "status 1" in err


def test_console_table_fits_100_columns_and_switches_to_ms(tmp_path, capsys):
    """Issue #38: the table was 125-160 columns and never showed ms. Both counters, names of 30 and 50
    characters: every line within 100 columns, a longer name on its own line, 1.5 ms and 999.97 us as ms."""
    names = {"LayerNorm/bf16/4096x8192/aten": 100.0, "MLP/bf16/4096x16384x4096/silu_and_mul/cuda_graph": 1534.0,
             "Gemv/bf16/4096/aten": 999.97}

    def side(path, factor):
        entries = [dict(entry(n, t * factor * (1 + 0.001 * r), r, 10), **{"GB/s": 1e3 / t, "TFLOP/s": 12.5})
                   for n, t in names.items() for r in range(10)]
        path.write_text(json.dumps({"context": {"opbench_processes": 10}, "benchmarks": entries}))
        return str(path)
    code, out, _ = run_main([side(tmp_path / "o.json", 1.0), side(tmp_path / "n.json", 1.06)], capsys)
    assert code == 0 and "TFLOP/s" in out
    assert max(len(line) for line in out.splitlines()) <= 100, out
    assert "MLP/bf16/4096x16384x4096/silu_and_mul/cuda_graph\n" in out and "1.541 ms" in out
    assert compare.fmt_value(999.97e-6, "real_time") == "1 ms" and compare.fmt_value(1.5e-3, "cpu_time") == "1.5 ms"
    assert compare.fmt_value(999.4e-6, "real_time") == "999.4 us" and compare.fmt_value(2.5, "real_time") == "2.5 s"


def test_a_large_file_is_read_entry_by_entry_into_arrays(tmp_path):
    """Issue #38: the whole document was parsed into dicts first (a 200 MB file: 1.8 GB). Entries are now
    parsed one at a time and kept as doubles: the peak stays within a small multiple of the file's size."""
    import tracemalloc
    path = tmp_path / "big.json"
    entries = ",".join('{"name":"a","real_time":%d}' % (i % 997 + 1) for i in range(30_000))
    path.write_text('{"benchmarks":[' + entries + "]}")
    size = path.stat().st_size
    tracemalloc.start()
    run = results.load_run(str(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(run.cases["a"].values["real_time"]) == 30_000
    assert peak < 3 * size, f"{peak} bytes at peak for a {size}-byte file"


def test_binaries_mode_adds_processes_only_for_unresolved_cases(tmp_path, capsys, monkeypatch):
    # Noisy (2% a process) cannot resolve 3% with 9 processes a side (4.5 se = 5.3%): sequential testing
    # reruns it alone, 8 a side at a time, until it resolves; Calm (0.2%) keeps its 9.
    log = tmp_path / "filters.log"
    monkeypatch.setenv("FAKE_BENCH_LOG", str(log))
    monkeypatch.setenv("PATH", path_with_this_python())
    out_dir = tmp_path / "runs"
    code, out, err = run_main(["--binaries", FAKE_BENCH, FAKE_BENCH, "--repetitions", "9", "--max-repetitions", "49",
                               "--batch", "8", "--out-dir", str(out_dir), "--color", "never"], capsys)
    assert code == 0, err
    reps = {}
    for e in json.loads((out_dir / "new.json").read_text())["benchmarks"]:
        reps[e["name"]] = reps.get(e["name"], 0) + 1
    assert reps["Calm/bf16/64/aten"] == 9 and 17 <= reps["Noisy/bf16/64/aten"] <= 49, reps
    filters = log.read_text().split()
    assert filters[:18] == ["."] * 18 and set(filters[18:]) == {"^(Noisy/bf16/64/aten)(/.*)?$"}
    assert "NOISY" not in out and "[sequential] 1 case(s) unresolved after 9 processes a side" in err


def test_paired_comparison_sees_through_drift_shared_by_neighbours(tmp_path, capsys):
    # Each pair of processes shares a drift of 3% (the machine's state) and adds 0.2% of its own: unpaired,
    # the drift hides a 2% slowdown (NOISY); paired, the log ratios cancel it and the slowdown is SLOWER.
    import numpy as np
    rng = np.random.default_rng(4)
    drift = np.exp(rng.normal(0, 0.03, 12))
    old = 100 * drift * np.exp(rng.normal(0, 0.002, 12))
    new = 102 * drift * np.exp(rng.normal(0, 0.002, 12))
    paths = []
    for side, values in (("old", old), ("new", new)):
        entries = [entry("A/x/1/y", v, i, 12) for i, v in enumerate(values)]
        (tmp_path / f"{side}.json").write_text(json.dumps({"context": {"opbench_processes": 12}, "benchmarks": entries}))
        paths.append(str(tmp_path / f"{side}.json"))
    code, out, _ = run_main([*paths, "--threshold", "1", "--color", "never"], capsys)
    assert code == 0 and "NOISY" in out
    code, out, _ = run_main([*paths, "--threshold", "1", "--paired", "--color", "never"], capsys)
    assert code == 0 and "SLOWER" in out and " +2.1% " in out   # the median of the pairs' ratios
