"""bench_ops --oplog end to end on CPU: a small synthetic operator-input log replayed through the
dispatcher, the per-operator CSV, the not-run list, names, --benchmark_list_tests and
--benchmark_filter, and index inputs made valid (embedding, nll_loss, gather, max-pool indices)."""
import csv
import re
import subprocess

import pytest

from bench_ops_bin import ROOT, bench_ops

LOG = ROOT / "tests" / "data" / "oplogs" / "tiny_training.txt"
FAST = ["--opbench_max_time=0.05"]
RUNNABLE = [
    "aten.embedding.default",
    "aten.nll_loss_forward.default",
    "aten.nll_loss_backward.default",
    "aten.addmm.default",
    "aten._to_copy.default",
    "aten.sum.dim_IntList",   # recorded as aten.sum.SymInt: the parser's alias table renames it
    "aten.add.Tensor",
    "aten.gather.default",
    "aten.max_pool2d_with_indices_backward.default",
    "aten.new_zeros.default",
    "aten.div.Tensor",        # a Python number for a Tensor argument: a wrapped 0-d tensor
]
UNKNOWN = "aten.not_an_operator.default"


def run(*args, check=True):
    proc = subprocess.run([str(bench_ops()), "--oplog", str(LOG), *args],
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"bench_ops failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {row["operator"]: row for row in rows}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay") / "tiny.csv"
    proc = run("--output", str(out), *FAST)
    return proc, out


def test_every_supported_operator_has_a_timed_row(full_run):
    proc, out = full_run
    with open(out, newline="") as f:
        header = next(csv.reader(f))
    gpu = "graph_median_s" in header
    if gpu:   # operatorbench's order: operator, speedup quantiles, elapsed, absolute times (units in names)
        assert header[:7] == ["operator", "graph_speedup_p20", "graph_speedup_p50", "graph_speedup_p80", "elapsed_s",
                              "eager_median_s", "graph_median_s"]
    else:     # CPU: eager only
        assert header[:3] == ["operator", "elapsed_s", "eager_median_s"]
    assert not any(" " in column for column in header)
    rows = read_rows(out)
    assert set(rows) == set(RUNNABLE) | {UNKNOWN}
    for op in RUNNABLE:
        assert float(rows[op]["eager_median_s"]) > 0, op
        if gpu:
            assert float(rows[op]["graph_speedup_p20"]) <= float(rows[op]["graph_speedup_p50"]) <= float(rows[op]["graph_speedup_p80"])
            assert rows[op]["accuracy"] == "ok", (op, rows[op]["accuracy"])
        assert rows[op]["model"] == "tiny_training"
        assert int(rows[op]["inputs_run"]) >= 1, op
    assert rows["aten.embedding.default"]["weight"] == "4"        # cnt 3 + 1
    assert rows["aten.embedding.default"]["status"] == "ok"       # valid indices, also stride 0
    assert "Replay:" in proc.stdout and "11 of 12 operators ran" in proc.stdout


def test_unknown_operator_and_unmappable_input_are_listed_with_reasons(full_run):
    proc, out = full_run
    rows = read_rows(out)
    assert rows[UNKNOWN]["eager_median_s"] == ""
    assert rows[UNKNOWN]["status"].startswith("not run: no operator aten::not_an_operator")
    add = rows["aten.add.Tensor"]
    assert (add["inputs"], add["inputs_replayed"], add["inputs_run"]) == ("3", "3", "2")
    assert "input 2 not run: argument 'other' (Tensor): expected a Tensor, got a str" in add["status"]
    assert "Not run (2):" in proc.stdout
    assert f"tiny_training {UNKNOWN} (all 1 input) (tests/data/oplogs/tiny_training.txt:26): no operator" in proc.stdout.replace(str(ROOT) + "/", "")


def test_index_inputs_run_without_errors(full_run):
    proc, out = full_run
    rows = read_rows(out)
    for op in ["aten.embedding.default", "aten.nll_loss_forward.default", "aten.nll_loss_backward.default",
               "aten.gather.default", "aten.max_pool2d_with_indices_backward.default"]:
        assert rows[op]["status"] == "ok", (op, rows[op]["status"])
    assert "Failed:" not in proc.stdout


def test_list_tests_names_every_case():
    proc = run("--benchmark_list_tests")
    names = proc.stdout.split()
    eager = [n for n in names if n.endswith("/eager")]
    graph = [n for n in names if n.endswith("/graph")]   # only where a CUDA device is
    assert len(eager) == 13 and len(graph) in (0, 13) and len(names) == len(eager) + len(graph)
    assert "Replay/tiny_training/aten.embedding.default/1/eager" in names
    assert "Replay/tiny_training/aten.add.Tensor/1/eager" in names
    assert not any(UNKNOWN in n or "aten.add.Tensor/2/" in n for n in names)
    assert all(n.startswith("Replay/tiny_training/") for n in names)


def test_max_inputs_and_filter(tmp_path):
    listed = run("--benchmark_list_tests", "--oplog_max_inputs=1").stdout.split()
    assert "Replay/tiny_training/aten.add.Tensor/0/eager" in listed
    assert not any("/1/" in n for n in listed)
    out = tmp_path / "filtered.csv"
    proc = run("--benchmark_filter=aten.embedding", "--output", str(out), *FAST)
    assert set(read_rows(out)) == {"aten.embedding.default"}
    # progress: plain lines when stderr is not a terminal, counting the selected cases only
    assert re.search(r"^\[(2|4)/\1\] Replay/tiny_training/aten.embedding.default/1/", proc.stderr, re.M)


def test_dtype_channels_last_and_folder(tmp_path):
    out = tmp_path / "bf16.csv"
    run("--oplog_dtype=bf16", "--channels_last", "--benchmark_filter=aten.add.Tensor/1", "--output", str(out), *FAST)
    assert read_rows(out)["aten.add.Tensor"]["inputs_run"] == "1"
    proc = subprocess.run([str(bench_ops()), "--oplog", str(LOG.parent), "--benchmark_list_tests"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Replay/tiny_training/aten.gather.default/0/eager" in proc.stdout


def test_missing_log_is_a_usage_error(tmp_path):
    proc = subprocess.run([str(bench_ops()), "--oplog", str(tmp_path / "none.txt")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "none.txt: no such file or folder" in proc.stderr
