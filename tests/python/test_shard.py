"""opbench-shard on the CPU (--shards N runs N CPU processes; on a GPU host one per GPU, hidden here): a
sharded sweep gives the experiment rows and the cases of an unsharded one, merged into the same files;
a shard that dies loses none of the other shard's rows, and opbench-shard names it and exits 3."""
import csv
import json
import os
import re
import pathlib
import signal
import subprocess
import sys

import pytest

from bench_ops_bin import bench_ops
from opbench_tools import shard
# Fast families on the CPU (the norms, the GEMVs), a world-of-one collective among them (each shard is
# its own world).
FILTER = "--benchmark_filter=^([A-Za-z]+Norm|Gemv|GatherGemv|Collective/fp32)/"


CPU_ONLY = dict(os.environ, CUDA_VISIBLE_DEVICES="")   # the CPU cases, also on a GPU host


def shard_py(*args, env=CPU_ONLY, timeout=300):
    return subprocess.run([sys.executable, "-m", "opbench_tools.shard", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def run_bench_ops(*args):
    return subprocess.run([str(bench_ops()), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=CPU_ONLY)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def row_keys(rows):
    return {(r["name"], r["dtype"], r["backend"], r["metric"]) for r in rows}


def iteration_names(doc):
    return [b["name"] for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]


def test_a_sharded_cpu_sweep_gives_the_rows_and_cases_of_an_unsharded_one(tmp_path):
    one = run_bench_ops(FILTER, "--output", tmp_path / "one.csv", f"--benchmark_out={tmp_path / 'one_gb.json'}")
    assert one.returncode == 0, one.stderr
    two = shard_py("--shards", 2, "--", FILTER, "--output", tmp_path / "two.csv",
                   f"--benchmark_out={tmp_path / 'two_gb.json'}")
    assert two.returncode == 0, two.stderr
    assert "[shard 0 cpu]" in two.stdout and "[shard 1 cpu]" in two.stdout
    # Each shard's closing line: its case runs and the seconds they took (bench_ops' case_wall_s), then the run's.
    closing = re.findall(r"shard (\d) \(cpu\): ok; (\d+) case run\(s\) in its JSON, ([\d.]+) s of cases", two.stderr)
    assert [c[0] for c in closing] == ["0", "1"] and sum(float(c[2]) for c in closing) > 0, two.stderr
    assert re.search(r"opbench-shard: [\d.]+ s from the first shard's start to the last one's end", two.stderr)

    # The rows: the same set (experiment, dtype, backend, metric), one run id, each naming its device.
    unsharded, sharded = rows_of(tmp_path / "one.csv"), rows_of(tmp_path / "two.csv")
    assert row_keys(sharded) == row_keys(unsharded) and len(sharded) == len(unsharded)
    assert len({r["run_id"] for r in sharded}) == 1
    assert {r["device_id"] for r in sharded} == {"cpu"}
    records = [json.loads(line) for line in (tmp_path / "two.json").read_text().splitlines()]
    assert len(records) == len(sharded)
    assert all(rec["benchmark"]["extra_info"]["device_id"] == "cpu" for rec in records)

    # The merged Google Benchmark JSON: every case once, in the order one process runs them, tagged.
    single, merged = json.load(open(tmp_path / "one_gb.json")), json.load(open(tmp_path / "two_gb.json"))
    assert iteration_names(merged) == iteration_names(single)
    assert {b["opbench_shard"] for b in merged["benchmarks"]} == {"0", "1"}   # both shards had work
    ran = lambda b: not b.get("error_occurred") or b["error_message"].startswith("unavailable: ")   # noqa: E731
    assert all(b["opbench_device_id"] == "cpu" and ran(b) for b in merged["benchmarks"])
    assert merged["context"]["opbench_shards"] == "2" and "opbench_failed_shards" not in merged["context"]


def test_a_killed_shard_loses_none_of_the_other_shards_rows(tmp_path):
    wrapper = tmp_path / "bench_ops_dies_as_shard_1"
    wrapper.write_text(f'#!/bin/sh\n[ "$OPBENCH_SHARD" = 1 ] && kill -9 $$\nexec "{bench_ops()}" "$@"\n')
    wrapper.chmod(0o755)
    run = shard_py("--shards", 2, "--bench-ops", wrapper, "--", FILTER, "--output", tmp_path / "rows.csv",
                   f"--benchmark_out={tmp_path / 'merged.json'}")
    assert run.returncode == 3, run.stderr
    assert "shard 1 (cpu): FAILED: killed by signal 9" in run.stderr
    assert "failed shard(s): 1" in run.stderr
    # Exactly shard 0's rows: those bench_ops writes for share 0 of 2 on its own.
    alone = run_bench_ops(FILTER, "--opbench_shard=0/2", "--output", tmp_path / "shard0.csv")
    assert alone.returncode == 0, alone.stderr
    kept = rows_of(tmp_path / "rows.csv")
    assert kept and row_keys(kept) == row_keys(rows_of(tmp_path / "shard0.csv"))
    merged = json.load(open(tmp_path / "merged.json"))
    assert merged["context"]["opbench_failed_shards"] == "1"
    assert {b["opbench_shard"] for b in merged["benchmarks"]} == {"0"} and iteration_names(merged)


def test_an_unfinished_shard_json_keeps_its_complete_entries(tmp_path):
    path = tmp_path / "shard.json"
    path.write_text('{\n  "context": {"opbench_device_id": "cuda:1"},\n  "benchmarks": [\n'
                    '    {"name": "A/fp32/1/aten", "real_time": 1.0},\n    {"name": "B/fp32/1/aten", "real_ti')
    doc, complete = shard.read_shard_json(path)
    assert not complete
    assert doc["context"] == {"opbench_device_id": "cuda:1"}
    assert [b["name"] for b in doc["benchmarks"]] == ["A/fp32/1/aten"]


def test_unusable_input_is_one_line_and_exit_2(tmp_path):
    cases = [
        (["--", FILTER], "no GPU found"),
        (["--shards", 2, "--", FILTER, "--opbench_markdown", tmp_path / "x.md"], "--opbench_markdown cannot be given"),
        (["--shards", 2, "--", FILTER, "--benchmark_out_format=csv"], "the merged file is JSON"),
        (["--shards", 2, "--", FILTER, "--output", tmp_path / "r.csv", f"--benchmark_out={tmp_path / 'r.json'}"],
         "is also a file --output"),
        (["--shards", 0, "--", FILTER], "--shards 0: expected 1 to 4096"),
    ]
    for args, says in cases:
        proc = shard_py(*args)
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    bad_filter = shard_py("--shards", 2, "--", "--benchmark_filter=(")
    assert bad_filter.returncode == 2 and "not a valid regular expression" in bad_filter.stderr


def test_gpus_on_a_host_without_gpus_is_refused():
    for gpus, says in (("0,1", "this host shows no GPU"), (",", "name GPU indices")):
        proc = shard_py("--gpus", gpus, "--", FILTER)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "cuda:" not in proc.stderr
    two = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1")
    for gpus, says in (("2", "2 not among this host's GPUs (0,1)"), ("0,0", "a GPU named twice")):
        proc = shard_py("--gpus", gpus, "--", FILTER, env=two)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_shards_and_merges_what_they_finished(tmp_path, sig, code):
    """The stand-in bench_ops writes one entry, waits, and closes its JSON when the signal reaches it."""
    fake = pathlib.Path(__file__).parent / "data" / "fakes" / "bench_ops_until_signal.sh"
    merged = tmp_path / "merged.json"
    # SIGINT as a terminal delivers it: a test run started as a background job inherits SIGINT ignored,
    # which Python and the stand-in's bash keep, and the shards would then run their 30 s out.
    proc = subprocess.Popen([sys.executable, "-m", "opbench_tools.shard", "--shards", "2", "--bench-ops", str(fake),
                             "--", f"--benchmark_out={merged}"], stderr=subprocess.PIPE, text=True, env=CPU_ONLY,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started, line = 0, "-"
    while started < 2 and line:   # each shard says "started" on stderr once its entry is on disk
        line = proc.stderr.readline()
        started += "started" in line
    proc.send_signal(sig)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == code, stderr
    doc = json.loads(merged.read_text())
    assert doc["context"]["opbench_interrupted"] == signal.Signals(sig).name
    assert [b["opbench_shard"] for b in doc["benchmarks"]] == ["0", "1"]
    assert "the merged results hold what the shards finished" in stderr
