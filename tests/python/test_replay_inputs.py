"""bench_ops --oplog on logs a user gets wrong: each bad line named file:line:column with its reason,
exit 2 when nothing can run, exit 1 when some lines did not parse, inputs too large refused before
anything is allocated, a per-case time budget, and an existing CSV of another schema left alone."""
import subprocess

from bench_ops_bin import bench_ops, run_bench_ops as run




def log(tmp_path, text, name="model.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_log_of_only_bad_lines_exits_2_with_file_line_col_for_each(tmp_path):
    path = log(tmp_path, "garbage one\n\ncnt: x, ((T([2], f32),), {})\n")
    proc = run("--oplog", str(path))
    assert proc.returncode == 2
    assert f"{path}:1:1: unrecognized line" in proc.stderr
    assert f"{path}:3:" in proc.stderr
    assert "no line of the log could be parsed" in proc.stderr
    listed = run("--oplog", str(path), "--benchmark_list_tests")   # the reasons show when listing too
    assert f"{path}:1:1:" in listed.stderr


def test_unknown_operator_alone_and_empty_log_say_why(tmp_path):
    unknown = run("--oplog", str(log(tmp_path, "Operator: aten.no_such_op.default\ncnt: 1, ((T([2], f32),), {})\n")))
    assert unknown.returncode == 2 and "no operator aten::no_such_op" in unknown.stderr
    assert "no input of the log can run here" in unknown.stderr
    empty = run("--oplog", str(log(tmp_path, "", "empty.txt")))
    assert empty.returncode == 2 and "the log is empty" in empty.stderr


def test_some_bad_lines_run_the_rest_and_exit_1(tmp_path):
    path = log(tmp_path, "Operator: aten.add.Tensor\ncnt: 1, ((T([4], f32), T([4], f32)), {})\nnot a line\n")
    proc = run("--oplog", str(path), "--opbench_max_time=0.01")
    assert proc.returncode == 1
    assert "aten.add.Tensor" in proc.stdout and f"{path}:3:1" in proc.stderr
    assert "1 line(s) of the log could not be parsed" in proc.stderr


def test_inputs_larger_than_memory_or_the_cpu_limit_are_refused_before_allocation(tmp_path):
    huge = "Operator: aten.add.Tensor\ncnt: 1, ((T([2048, 1024, 1024], f32), T([2048, 1024, 1024], f32)), {})\n"
    proc = run("--oplog", str(log(tmp_path, huge)), "--oplog_max_input_mb=0")
    assert proc.returncode == 2
    assert "GB is available" in proc.stderr and "its inputs need 34.36 GB" in proc.stderr
    medium = "Operator: aten.add.Tensor\ncnt: 1, ((T([1024, 1024, 64], f32), T([1024, 1024, 64], f32)), {})\n"
    limited = run("--oplog", str(log(tmp_path, medium, "m.txt")))
    assert limited.returncode == 2 and "over --oplog_max_input_mb=256 (the CPU default" in limited.stderr


def test_a_call_over_the_budget_is_skipped_after_it(tmp_path):
    path = log(tmp_path, "Operator: aten.mm.default\ncnt: 1, ((T([1024, 1024], f32), T([1024, 1024], f32)), {})\n")
    proc = run("--oplog", str(path), "--oplog_case_budget_s=0.001")
    assert proc.returncode == 0, proc.stderr
    assert "s budget (--oplog_case_budget_s): not timed" in proc.stdout + proc.stderr


def test_an_existing_csv_of_another_schema_is_refused_not_overwritten(tmp_path):
    path = log(tmp_path, "Operator: aten.add.Tensor\ncnt: 1, ((T([4], f32), T([4], f32)), {})\n")
    rows = tmp_path / "rows.csv"
    rows.write_text("name,metric,target\nx,y,1\n")
    proc = run("--oplog", str(path), "--output", str(rows))
    assert proc.returncode == 2 and "refusing to write to it" in proc.stderr
    assert rows.read_text() == "name,metric,target\nx,y,1\n"
    own = tmp_path / "replay.csv"
    for _ in range(2):
        assert run("--oplog", str(path), "--output", str(own), "--opbench_max_time=0.01").returncode == 0
    assert own.read_text().count("aten.add.Tensor") == 2     # appended, as family rows are
