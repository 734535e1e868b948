"""opbench-changepoints (a series of runs, not a pair) and its evaluation: the E-divisive statistic against
its definition, steps found in Google Benchmark JSON and in dashboard records with their commit and size,
A/A series without steps, --recent's exit 1, unusable input's exit 2, and scripts/eval_changepoints.py's
figures on synthetic series and on the committed H200 records."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bench_ops_bin import ROOT
from opbench_tools import changepoints
from opbench_tools.edivisive import _divergences, change_points


def write_gb(path, times_us, sha="unknown"):
    """A Google Benchmark JSON of one process: case name -> real_time in us."""
    entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                "iterations": 1, "real_time": t, "cpu_time": t, "time_unit": "us"} for name, t in times_us.items()]
    path.write_text(json.dumps({"context": {"opbench_sha": sha}, "benchmarks": entries}))
    return str(path)


def record(name, metric, value, run_id, sha):
    return json.dumps({"benchmark": {"name": "opbench", "dtype": "bfloat16",
                                     "extra_info": {"run_id": run_id, "device": "cuda"}},
                       "model": {"name": name, "backend": "aten"},
                       "metric": {"name": metric, "benchmark_values": [value], "target_value": None},
                       "dependencies": {"opbench": {"sha": sha}}})


def run(argv, capsys):
    try:
        code = changepoints.main(argv)
    except SystemExit as e:   # argparse's usage error
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def nightly(tmp_path, nights=24, step_at=12, step=1.05, cv=0.005, seed=0):
    """One file a night, named by date: a stepped case and a steady one."""
    rng = np.random.default_rng(seed)
    folder = tmp_path / "nightly"
    folder.mkdir()
    for night in range(nights):
        factor = step if night >= step_at else 1.0
        noise = np.exp(rng.normal(0, cv, 2))
        write_gb(folder / f"2026-11-{night + 1:02d}.json",
                 {"LayerNorm/bf16/4096x8192/aten": 60.0 * factor * noise[0], "Gemv/bf16/16384/cuda": 120.0 * noise[1]},
                 sha=f"c{night:03d}")
    return str(folder)


def test_divergence_is_the_energy_statistic_of_its_definition():
    x = np.random.default_rng(3).normal(size=15)

    def by_definition(t):
        a, b = x[:t], x[t:]
        mean_pairs = lambda v: np.mean([abs(v[i] - v[k]) for i in range(len(v)) for k in range(i + 1, len(v))])
        return len(a) * len(b) / len(x) * (2 * np.mean(np.abs(a[:, None] - b[None, :])) - mean_pairs(a) - mean_pairs(b))
    q = _divergences(np.abs(x[:, None] - x[None, :]), 3)
    assert np.allclose(q, [by_definition(t) for t in range(3, 13)])


def test_a_step_is_found_where_it_starts_with_its_commit_size_and_confidence(tmp_path, capsys):
    out = tmp_path / "steps.json"
    code, text, _ = run([nightly(tmp_path), "--json", str(out)], capsys)
    assert code == 0, text
    series = {r["series"]: r for r in json.loads(out.read_text())["series"]}
    (step,) = series["LayerNorm/bf16/4096x8192/aten"]["steps"]
    assert step["point"] == 12 and step["label"] == "c012" and step["source"].endswith("2026-11-13.json")
    assert 4.0 < step["change_pct"] < 6.0 and step["p_value"] <= 0.01 and step["confidence_pct"] >= 99
    assert series["Gemv/bf16/16384/cuda"]["steps"] == []
    line = next(l for l in text.splitlines() if l.startswith("STEP"))
    assert "LayerNorm/bf16/4096x8192/aten: from point 12 (c012): 59.84 us -> 63.01 us, 5.3% worse; p=0.005" in line


def test_a_a_series_has_no_step_and_a_speedup_is_better(tmp_path, capsys):
    code, text, _ = run([nightly(tmp_path, step=1.0)], capsys)
    assert code == 0 and "STEP" not in text and "0 step(s) in 0 series; 2 series without a step" in text
    faster = tmp_path / "faster"
    faster.mkdir()
    code, text, _ = run([nightly(faster, step=0.9)], capsys)
    assert code == 0 and "% better" in text and "% worse" not in text


def test_dashboard_records_one_file_appended_night_after_night(tmp_path, capsys):
    # A throughput that drops 5% from night 10: a step that is worse; the sha labels each night.
    path = tmp_path / "rows.json"
    rng = np.random.default_rng(1)
    lines = [record("layer_norm", "memory_bandwidth(GB/s)", (1600 if n < 10 else 1520) * np.exp(rng.normal(0, 0.004)),
                    f"run{n}", f"sha{n}") for n in range(20)]
    path.write_text("\n".join(lines) + "\n")
    code, text, _ = run([str(path)], capsys)
    assert code == 0, text
    line = next(l for l in text.splitlines() if l.startswith("STEP"))
    assert "layer_norm/bfloat16/aten/memory_bandwidth(GB/s): from point 10 (sha10)" in line
    assert 4.5 < float(line.split("GB/s): ")[1].split("% worse")[0].rsplit(" ", 1)[1]) < 6.0   # 1600/1520 - 1


def test_recent_regression_exits_1_and_an_old_one_does_not(tmp_path, capsys):
    folder = nightly(tmp_path, step_at=20)
    code, text, _ = run([folder, "--recent", "4", "--threshold", "2"], capsys)
    assert code == 1 and "RECENT REGRESSION LayerNorm/bf16/4096x8192/aten: from point 20" in text
    assert run([folder, "--recent", "3", "--threshold", "2"], capsys)[0] == 0   # began 4 nights ago
    assert run([folder, "--recent", "4", "--threshold", "8"], capsys)[0] == 0   # smaller than the threshold


@pytest.mark.parametrize("content, expected", [
    ('{"benchmarks": []}\n', "1 point(s): a step needs at least 3 on each side"),
    ('{"model": {"name": "x"}}\n', "not a dashboard record (needs model.name and metric.name"),
    ('{"model": {"name": "x"}, "metric": {"name": "m"}}\n{"a": \n', ":2:"),
])
def test_unusable_input_exits_2_in_one_line(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run([str(path)], capsys)
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, err


def test_too_many_points_and_bad_options_exit_2(tmp_path, capsys, monkeypatch):
    folder = nightly(tmp_path)
    monkeypatch.setattr(changepoints, "MAX_POINTS", 10)
    code, _, err = run([folder], capsys)
    assert code == 2 and "24 points: at most 10" in err
    for argv in (["--alpha", "0"], ["--alpha", "0.001", "--permutations", "99"], ["--min-segment", "1"],
                 ["--filter", "("]):
        assert run([folder, *argv], capsys)[0] == 2, argv


def test_change_points_of_a_two_step_series():
    rng = np.random.default_rng(5)
    x = np.concatenate([100 * np.exp(rng.normal(0, 0.005, 15)), 103 * np.exp(rng.normal(0, 0.005, 15)),
                        98 * np.exp(rng.normal(0, 0.005, 15))])
    assert [c.index for c in change_points(x)] == [15, 30]


def eval_figures(tmp_path, *args):
    out = tmp_path / "eval.json"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval_changepoints.py"), "--json", str(out), *args],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("| series (30 points) |")
    return json.loads(out.read_text())


def test_evaluation_on_synthetic_and_real_series_gives_sane_figures(tmp_path):
    figures = eval_figures(tmp_path, "--series", "40", "--seed", "7", "--real")
    rows = {r["label"]: r for r in figures["synthetic"]}
    for cv in ("0.5", "1"):
        aa = rows[f"A/A, CV {cv}%"]
        assert aa["series_with_false"] <= 0.05 * aa["series"], aa
    assert rows["+5% step, CV 0.5%"]["found"] >= 0.9 * 40
    assert rows["+5% step, CV 1%"]["found"] >= 0.9 * 40
    assert rows["+2% step, CV 0.5%"]["found"] >= 0.8 * 40
    strict, relaxed = figures["real"]
    assert strict["true_steps"] == 13 and strict["found"] == 13 and relaxed["found"] == 13
    assert len(relaxed["false"]) == 0 and len(strict["false"]) <= 2
