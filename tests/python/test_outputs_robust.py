"""bench_ops refuses unusable selections and output paths before running anything (exit 2, one line),
and two bench_ops writing the same --output keep every row."""
import csv
import json
import subprocess

from bench_ops_bin import bench_ops, run_bench_ops as run

FAST = ["--opbench_max_time=0.01", "--opbench_min_samples=3"]




def test_filter_matching_nothing_or_invalid_exits_2_with_one_line():
    nothing = run("--benchmark_filter=NoSuchFamily/")
    assert nothing.returncode == 2
    assert "--benchmark_filter=NoSuchFamily/ matches no case" in nothing.stderr
    invalid = run("--benchmark_filter=(")
    assert invalid.returncode == 2
    assert "not a valid regular expression" in invalid.stderr


def test_output_clashes_are_refused_before_any_case_runs(tmp_path):
    same_json = run("--output", str(tmp_path / "same.json"))
    assert same_json.returncode == 2 and "expected a .csv file" in same_json.stderr
    clash = run("--output", str(tmp_path / "run.csv"), f"--benchmark_out={tmp_path / 'run.json'}")
    assert clash.returncode == 2 and "--benchmark_out" in clash.stderr and "run.json" in clash.stderr
    under_file = tmp_path / "plain"
    under_file.write_text("x")
    bad = run("--output", str(under_file / "x.csv"))
    assert bad.returncode == 2 and "which is not a folder" in bad.stderr
    assert "Experiments on" not in bad.stdout          # nothing ran
    assert not list(tmp_path.glob("*.tmp"))


def test_two_writers_keep_every_row(tmp_path):
    """Two bench_ops append to one --output at the same time: 20 of 20 rows kept, in 20 of 20 trials."""
    rows_per_run = 10   # gemv, gather_gemv x {bfloat16, int8, int4}; layer_norm x 3 dtypes; mlp: each written when complete
    kept = []
    for trial in range(20):
        out = tmp_path / f"shared_{trial}.csv"
        args = [str(bench_ops()), "--benchmark_filter=^(Gemv|GatherGemv|MLP|LayerNorm)/", "--output", str(out), *FAST]
        procs = [subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        header, *rows = list(csv.reader(out.open()))
        records = (tmp_path / f"shared_{trial}.json").read_text().splitlines()
        assert len(records) == len(rows)
        run_id = header.index("run_id")
        assert len({r[run_id] for r in rows}) == 2      # two run ids: both writers' rows are there
        kept.append(len(rows))
    assert kept == [2 * rows_per_run] * 20, kept


def targets_file(tmp_path, entry):
    path = tmp_path / "t.json"
    path.write_text('{"devices": ["X"], "rule": "r", "targets": [' + entry + ']}')
    return path


def test_bad_targets_exit_2_naming_file_and_entry_before_running(tmp_path):
    overflow = run("--targets", str(targets_file(tmp_path, '{"experiment": "gemv", "metric": '
                                                 '"memory_bandwidth(GB/s)", "dtype": "int8", "target": 1e400}')))
    assert overflow.returncode == 2 and "t.json" in overflow.stderr and "unusable number" in overflow.stderr
    typo = run("--targets", str(targets_file(tmp_path, '{"experiment": "gemv", "metric": "memory_bandwidth(GB/s)", '
                                             '"dtype": "int8", "backnd": "cuda", "target": 5}')))
    assert typo.returncode == 2 and 'unknown key "backnd"' in typo.stderr
    unknown = run("--targets", str(targets_file(tmp_path, '{"experiment": "gemvv", "metric": '
                                                '"memory_bandwidth(GB/s)", "dtype": "int8", "target": 5}')))
    assert unknown.returncode == 2 and '"gemvv" is not a registered experiment' in unknown.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = run("--targets", str(empty))
    assert folder.returncode == 2 and "holds no *.json targets file" in folder.stderr
    for proc in (overflow, typo, unknown, folder):
        assert "Experiments on" not in proc.stdout
