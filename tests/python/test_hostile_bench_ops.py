"""bench_ops end to end against a careless or hostile user (issue 38): outputs that clash or cannot be
written are refused before the first case, appends keep what a file held, a full disk and a signal leave
every output consistent, and nothing aborts or hangs. The bulk of the probes run in-process
(tests/cpp/hostile_input_test.cpp); these check the wiring, each with one tiny CPU case at most."""
import csv
import json
import os
import resource
import signal
import stat
import subprocess
import time

import pytest

from bench_ops_bin import bench_ops, run_bench_ops as run

ONE_CASE = ["--benchmark_filter=^LayerNorm/fp32/64x1024/aten", "--opbench_max_time=0.05"]
ONE_ROW = ["--benchmark_filter=^LayerNorm/fp32/.*/aten", "--opbench_max_time=0.05"]


def refused(proc, *parts):
    """Exit 2 with one bench_ops line holding every part; no case ran."""
    lines = [line for line in proc.stderr.splitlines() if line.startswith("bench_ops:")]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0], proc.stderr
    assert "Experiments on" not in proc.stdout


def test_two_outputs_on_one_file_are_refused_before_the_sweep(tmp_path):
    rows = tmp_path / "a.csv"
    rows.write_text("name,metric\nkeep,me\n")
    refused(run(*ONE_CASE, "--output", rows, "--opbench_markdown", rows), "--opbench_markdown", "the same file as")
    refused(run(*ONE_CASE, "--output", tmp_path / "s.csv", f"--benchmark_out={tmp_path}/./s.csv"), "/./s.csv: the same")
    targets = tmp_path / "t.json"
    targets.write_text("{}")
    refused(run(*ONE_CASE, "--targets", targets, f"--benchmark_out={tmp_path}/../{tmp_path.name}/t.json"),
            "which this run reads")
    assert rows.read_text() == "name,metric\nkeep,me\n" and targets.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "t.json"]


def test_inputs_and_outputs_that_used_to_abort_exit_2(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    refused(run("--targets", tmp_path / "loop"), "--targets", "symbolic link loop")
    refused(run(*ONE_CASE, "--output", tmp_path / ("d/" * 2100 + "x.csv")), "PATH_MAX")
    refused(run(*ONE_CASE, "--benchmark_repetitions=-1"), "expected a whole number in [1, 1000000]")
    (tmp_path / "plain").write_text("x")
    refused(run(*ONE_CASE, "--opbench_markdown", tmp_path / "plain" / "m.md"), "which is not a folder")
    refused(run(*ONE_CASE, "--opbench_trace", tmp_path / "plain" / "traces"), "--opbench_trace")


def test_an_output_onto_a_pipe_is_refused_by_what_it_is():
    # run() captures stdout through a pipe: /dev/stdout resolves to it, which has no path of its own
    refused(run(*ONE_CASE, "--benchmark_out=/dev/stdout"), "--benchmark_out /dev/stdout", "is a FIFO or pipe",
            "expected a regular file")


def test_inputs_are_bounded_and_fifos_do_not_hang(tmp_path):
    refused(run("--oplog", "/dev/zero"), "larger than 256 MiB")
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(300 << 20)   # sparse: refused by its size, not read
    refused(run("--oplog", huge), "larger than 256 MiB")
    big_csv = tmp_path / "big.csv"
    with big_csv.open("wb") as f:
        f.truncate(65 << 20)
    refused(run(*ONE_CASE, "--output", big_csv), "larger than 64 MiB")
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    refused(run("--targets", fifo, timeout=20), "is a FIFO")
    dup = tmp_path / "dup.json"
    dup.write_text('{"devices": ["X"], "rule": "r", "targets": [{"experiment": "e", "metric": "m", '
                   '"dtype": "int8", "target": 1, "target": 2}]}')
    refused(run(*ONE_CASE, "--targets", dup), 'the key "target" appears twice')


def test_google_benchmark_values_and_variables_are_checked_first():
    refused(run("--benchmark_format=xml"), "--benchmark_format=xml: expected console, json or csv")
    refused(run("--benchmark_repetitions=0"), "--benchmark_repetitions=0")
    nothing = run("--benchmark_list_tests", "--benchmark_filter=NoSuchFamily/")
    assert nothing.returncode == 2 and "matches no case" in nothing.stderr and nothing.stdout == ""
    env = dict(os.environ, OPBENCH_LAUNCH_RULES="a100")
    proc = subprocess.run([str(bench_ops()), *ONE_CASE], capture_output=True, text=True, env=env, timeout=60)
    refused(proc, "OPBENCH_LAUNCH_RULES=a100: expected h100 or h200")


def test_help_says_the_l2_flush_reads_a_buffer():
    text = run("--help").stdout
    assert "read a buffer of 2x L2" in text and "zeroed" not in text


def test_an_append_keeps_cells_links_mode_and_the_users_files(tmp_path):
    first = tmp_path / "first.csv"
    assert run(*ONE_ROW, "--output", first).returncode == 0
    real = tmp_path / "real"
    real.mkdir()
    target = real / "rows.csv"
    lines = first.read_text().splitlines()
    target.write_text("\n".join([lines[0], lines[1] + ",a cell,the user added"]) + "\n")
    target.chmod(0o664)
    (tmp_path / "rows.csv").symlink_to(target)
    os.link(target, tmp_path / "hard.csv")
    for mine in (tmp_path / "rows.csv.tmp", real / "rows.csv.tmp"):
        mine.write_text("mine")
    proc = run(*ONE_ROW, "--output", tmp_path / "rows.csv")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rows.csv").is_symlink()
    rows = list(csv.reader(target.open()))
    assert len(rows) == 3 and rows[1][-2:] == ["a cell", "the user added"]
    assert (tmp_path / "hard.csv").read_text() == target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o664
    assert (tmp_path / "rows.csv.tmp").read_text() == "mine" == (real / "rows.csv.tmp").read_text()
    assert not [p for p in tmp_path.rglob("*opbench*")]


def test_a_full_disk_keeps_both_files_as_they_were_and_says_why_once(tmp_path):
    out = tmp_path / "rows.csv"
    assert run(*ONE_ROW, "--output", out).returncode == 0
    before = out.read_text(), (tmp_path / "rows.json").read_text()
    limit = len(before[1]) + 100   # the CSV's next rows fit, the sidecar's next records do not

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([str(bench_ops()), "--benchmark_filter=^LayerNorm/", "--opbench_max_time=0.05",
                           "--output", str(out)], capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
    assert proc.returncode == 2
    reasons = [line for line in proc.stderr.splitlines() if "cannot be written" in line]
    assert len(reasons) == 1 and "File too large" in reasons[0], proc.stderr
    assert (out.read_text(), (tmp_path / "rows.json").read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "rows.json"]


def written(path):
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def start_slow_sweep(tmp_path, max_time_s=0.1):
    """bench_ops on the Gemv families, each case sampling for max_time_s; returns once the first row is
    on disk (mid-sweep): (process, rows.csv, gb.json, summary.md)."""
    out, gb_json, md = tmp_path / "rows.csv", tmp_path / "gb.json", tmp_path / "summary.md"
    args = [str(bench_ops()), "--benchmark_filter=^(GatherGemv|Gemv)/", f"--opbench_max_time={max_time_s}",
            "--opbench_min_samples=1000000", "--output", str(out), f"--benchmark_out={gb_json}",
            "--opbench_markdown", str(md)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not written(out) and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc, out, gb_json, md


@pytest.mark.parametrize("signum, code, times", [(signal.SIGINT, 130, 1), (signal.SIGTERM, 143, 1),
                                                 (signal.SIGTERM, 143, 2)])
def test_a_signal_drops_the_case_in_flight_and_writes_every_output(tmp_path, signum, code, times):
    """times=2: the signal twice at once, as `timeout` sends it (to the child, then to its group): one request."""
    proc, out, gb_json, md = start_slow_sweep(tmp_path)
    for i in range(times):
        time.sleep(0.01 * i)   # the first handled, the run still winding down
        proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert "stopped by SIG" in stderr
    ran = json.loads(gb_json.read_text())["benchmarks"]
    listed = run("--benchmark_list_tests", "--benchmark_filter=^(GatherGemv|Gemv)/").stdout.split()
    assert 0 < len(ran) < len(listed)
    rows = list(csv.reader(out.open()))[1:]
    assert len(rows) == len((tmp_path / "rows.json").read_text().splitlines())
    summary_rows = [line for line in md.read_text().splitlines() if line.startswith("| gemv") or
                    line.startswith("| gather_gemv")]
    assert len(summary_rows) >= len(rows) > 0

