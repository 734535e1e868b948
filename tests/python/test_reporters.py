"""bench_ops --output end to end on this machine: dashboard records against the v3 schema, the CSV,
targets errors, and a process killed mid-sweep keeping the rows of the experiments it finished."""
import csv
import json
import pathlib
import signal
import subprocess
import time

import jsonschema
import pytest

from bench_ops_bin import ROOT, bench_ops

SCHEMA = json.loads((pathlib.Path(__file__).parent / "dashboard_schema.json").read_text())
SEED_COLUMNS = ["name", "metric", "target", "actual", "dtype", "device", "arch", "is_model"]
FAST = ["--opbench_max_time=0.05"]


def run(*args, check=True):
    proc = subprocess.run([str(bench_ops()), *args], capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"bench_ops failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def test_output_writes_csv_and_schema_valid_dashboard_json(tmp_path):
    out = tmp_path / "deep" / "gpt_fast_benchmark.csv"
    proc = run("--benchmark_filter=LayerNorm/", "--output", str(out), *FAST)
    rows = list(csv.reader(out.open()))
    assert rows[0][:8] == SEED_COLUMNS
    assert [r[4] for r in rows[1:]] == ["bfloat16", "float16", "float32"]
    assert all(float(r[3]) > 0 for r in rows[1:])
    records = [json.loads(line) for line in (tmp_path / "deep" / "gpt_fast_benchmark.json").read_text().splitlines()]
    assert len(records) == 3
    for record in records:
        jsonschema.validate(record, SCHEMA)
        assert isinstance(record["metric"]["benchmark_values"][0], float)
    assert "Experiments on" in proc.stdout and "layer_norm" in proc.stdout


def test_schema_rejects_the_seeds_string_values():
    record = json.loads(json.dumps({
        "benchmark": {"name": "b", "mode": "inference", "dtype": "bfloat16", "extra_info": {"device": "cuda", "arch": "A"}},
        "model": {"name": "layer_norm", "type": "micro-benchmark", "backend": "aten", "origins": ["pytorch"]},
        "metric": {"name": "m", "benchmark_values": ["950.00"], "target_value": "950", "extra_info": {"status": "x"}},
        "runners": [{"name": "A", "type": "cuda", "gpu_count": 1, "gpu_mem_info": 80, "cpu_info": "c",
                     "cpu_count": 8, "avail_mem_in_gb": 64}],
        "dependencies": {"torch": {"version": "2.11.0"}, "cuda": {"version": "13.0"}, "opbench": {"sha": "x"}}}))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(record, SCHEMA)


def test_bad_targets_file_stops_the_run_with_file_and_entry(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"devices": ["X"], "rule": "r", "targets": [{"experiment": "gemv", "metric": "m", '
                   '"dtype": "int8", "target": -1}]}')
    proc = run("--benchmark_filter=LayerNorm/", "--targets", str(bad), *FAST, check=False)
    assert proc.returncode == 2
    assert f"{bad}: targets[0].target: expected a positive number" in proc.stderr


def test_list_tests_prints_stable_names():
    names = run("--benchmark_list_tests").stdout.split()
    assert "LayerNorm/bf16/64x256/aten" in names
    assert not any("iterations:" in n or "manual_time" in n for n in names)


def test_help_lists_opbench_flags_then_google_benchmark_flags():
    out = run("--help", check=False).stdout
    assert "--output FILE" in out and "--opbench_timer=events|graph" in out
    assert "--benchmark_filter" in out


def test_bad_flag_value_exits_2_naming_it():
    proc = run("--opbench_cache=lukewarm", check=False)
    assert proc.returncode == 2 and "--opbench_cache=lukewarm" in proc.stderr


def test_killed_mid_sweep_keeps_finished_experiments(tmp_path):
    out = tmp_path / "crash.csv"
    # Every case runs to its 0.5 s cap, so the sweep is slow enough to be killed in the middle.
    proc = subprocess.Popen([str(bench_ops()), "--benchmark_filter=LayerNorm/", "--output", str(out),
                             "--opbench_min_samples=100000", "--opbench_max_time=0.5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not out.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sweep ended before it could be killed"
    rows = list(csv.reader(out.open()))
    assert rows[0][:8] == SEED_COLUMNS
    assert len(rows) == 2 and rows[1][0] == "layer_norm" and rows[1][4] == "bfloat16"
    lines = (tmp_path / "crash.json").read_text().splitlines()
    assert len(lines) == 1
    jsonschema.validate(json.loads(lines[0]), SCHEMA)
