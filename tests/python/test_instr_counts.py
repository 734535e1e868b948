"""Tests for the instruction-count suite: bench_instr (instr/) and its runner opbench-instr
(opbench_tools.instr_counts, instr_pool, instr_server).

Without valgrind: the callgrind-dump parsing, the per-call arithmetic, diff, bench_instr's CLI and its
native fork server (timeouts, failures). With valgrind (which scripts/setup.sh installs, so CI has it; a
missing valgrind fails these tests unless OPBENCH_NO_VALGRIND=1): a small set measured twice agrees
within 0.1% everywhere, and an A/B run where one statement does twice the work moves that count, and
only that one, by about 2x, which opbench-compare reports as SLOWER.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opbench_tools import instr_counts, instr_pool, instr_server

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("OPBENCH_BUILD_DIR") or ROOT / "build")
EXE = BUILD / "bench_instr"
NO_VALGRIND_OK = os.environ.get("OPBENCH_NO_VALGRIND") == "1"


def need_exe():
    if not EXE.exists():
        if NO_VALGRIND_OK:
            pytest.skip("bench_instr not built and OPBENCH_NO_VALGRIND=1")
        pytest.fail(f"{EXE} missing: it is built wherever valgrind's headers are (scripts/setup.sh "
                    "installs valgrind); set OPBENCH_NO_VALGRIND=1 on a machine without them")
    return EXE


def need_valgrind():
    need_exe()
    if shutil.which("valgrind") is None:
        if NO_VALGRIND_OK:
            pytest.skip("valgrind missing and OPBENCH_NO_VALGRIND=1")
        pytest.fail("valgrind missing: scripts/setup.sh installs it (OPBENCH_NO_VALGRIND=1 skips)")


# ---------------------------------------------------------------- pure Python
DUMP = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  bench_instr --run add
part: 3

desc: Timerange: Basic block 100 - 200
desc: Trigger: Client Request: fwd.t1.r0.stmt

positions: line
events: Ir
summary: 577811

fn=(1) main
0 577811

totals: 577811
"""


def test_parse_dump():
    assert instr_server.parse_dump(DUMP) == ("fwd.t1.r0.stmt", 577811)


def test_parse_dump_rejects_a_dump_without_trigger():
    with pytest.raises(instr_server.WorkerError):
        instr_server.parse_dump(DUMP.replace("desc: Trigger: Client Request: fwd.t1.r0.stmt\n", ""))


def test_read_dumps_picks_one_process(tmp_path):
    (tmp_path / "cg.11.1").write_text(DUMP.replace("577811", "1500").replace("r0.stmt", "r0.base"))
    (tmp_path / "cg.11.2").write_text(DUMP)
    (tmp_path / "cg.12.1").write_text(DUMP.replace("577811", "9"))
    (tmp_path / "cg.11").write_text("# final dump, no trigger\n")
    assert instr_server.read_dumps(tmp_path, "cg.11.*") == {"fwd.t1.r0.base": 1500, "fwd.t1.r0.stmt": 577811}


def test_per_call_counts_subtract_the_empty_loop():
    totals = {"v.r0.base": 1500, "v.r0.stmt": 101500, "v.r1.base": 1500, "v.r1.stmt": 103500}
    dumps = ["v.r0.base", "v.r0.stmt", "v.r1.base", "v.r1.stmt"]
    assert instr_pool.per_call_counts(dumps, totals, 100) == [1000.0, 1020.0]
    with pytest.raises(instr_server.WorkerError):
        instr_pool.per_call_counts(dumps[:3], totals, 100)
    with pytest.raises(instr_server.WorkerError):
        instr_pool.per_call_counts(["v.r9.base", "v.r9.stmt"], totals, 100)


def test_spread():
    assert instr_pool.spread([100.0]) == 0.0
    assert instr_pool.spread([99.0, 100.0, 101.0]) == pytest.approx(0.02)


def _results(path, counts):
    doc = {"context": {}, "benchmarks": [{"name": n, "instructions": c, "real_time": 1.0,
                                          "time_unit": "ns"} for n, c in counts.items()]}
    path.write_text(json.dumps(doc))
    return str(path)


def test_diff_tolerance_and_missing(tmp_path, capsys):
    a = _results(tmp_path / "a.json", {"Instr/g/x/fwd/t1": 1000.0, "Instr/g/y/fwd/t1": 500.0})
    b = _results(tmp_path / "b.json", {"Instr/g/x/fwd/t1": 1000.5, "Instr/g/y/fwd/t1": 500.0})
    assert instr_counts.main(["diff", a, b]) == 0                      # 0.05% < 0.1%
    assert "max |difference| 0.0500%" in capsys.readouterr().out
    c = _results(tmp_path / "c.json", {"Instr/g/x/fwd/t1": 2000.0, "Instr/g/y/fwd/t1": 500.0})
    assert instr_counts.main(["diff", a, c]) == 1
    assert "+100.000%" in capsys.readouterr().out
    d = _results(tmp_path / "d.json", {"Instr/g/x/fwd/t1": 1000.0})
    assert instr_counts.main(["diff", a, d]) == 1                      # a result went missing


# ---------------------------------------------------------------- bench_instr, natively
GROUPS = {"empty", "pointwise", "data", "reduction", "indexing", "views", "misc", "linalg", "nn",
          "mesoscale", "training"}


def test_list_covers_the_standard_set():
    defs = json.loads(subprocess.run([str(need_exe()), "--list", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    labels = [d["label"] for d in defs]
    assert len(labels) == len(set(labels)) >= 60
    assert {d["group"] for d in defs} == GROUPS
    for must in ("add_scalar_inplace", "add_tensor_inplace", "mul", "eq", "t_contiguous", "copy_",
                 "uniform_", "var_dim0", "index_ellipsis", "index_none", "index_bool",
                 "index_tensor", "setitem_int", "as_strided", "resize_same", "sort", "matmul", "mm",
                 "batchnorm2d", "groupnorm", "layernorm", "conv1d", "conv2d", "maxpool2d", "relu",
                 "sigmoid", "linear", "lstm", "mm_bias_relu"):
        assert must in labels
    variants = {d["label"]: d["variants"] for d in defs}
    assert variants["add_scalar_inplace"] == ["fwd"]
    assert variants["mul"] == ["fwd", "fwdbwd"]
    assert variants["mlp_sgd_step"] == ["fwdbwd"]


def test_native_run_prints_wall_times():
    out = subprocess.run([str(need_exe()), "--run", "mul", "--threads", "1,2"], capture_output=True,
                         text=True, check=True)
    doc = json.loads(out.stdout)
    assert doc["mode"] == "wall" and doc["label"] == "mul"
    got = {(r["variant"], r["threads"]) for r in doc["results"]}
    assert got == {("fwd", 1), ("fwdbwd", 1), ("fwd", 2), ("fwdbwd", 2)}
    assert all(len(r["wall_ns"]) >= 5 and min(r["wall_ns"]) > 0 for r in doc["results"])


def test_bad_arguments():
    exe = str(need_exe())
    r = subprocess.run([exe, "--run", "no_such_statement"], capture_output=True, text=True)
    assert r.returncode == 2 and "no definition 'no_such_statement'" in r.stderr
    r = subprocess.run([exe, "--run", "add", "--iters", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "--iters needs a positive integer" in r.stderr
    r = subprocess.run([exe, "--run", "add_scalar_inplace", "--variant", "fwdbwd"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "has no variant 'fwdbwd'" in r.stderr


def test_fork_server_timeout_failure_and_recovery(tmp_path):
    server = instr_server.Server(need_exe(), tmp_path / "srv", None)
    try:
        server.start()
        with pytest.raises(instr_server.WorkerError, match="timed out"):
            # Natively the warm-up is iters/10 calls: 20000 LSTM forwards, over a second.
            server.run(["--run", "lstm", "--threads", "1", "--iters", "200000"], timeout=0.2)
        with pytest.raises(instr_server.WorkerError, match=r"exit status 1(.|\n)*has no variant"):
            server.run(["--run", "size", "--variant", "fwdbwd"], timeout=60)
        pid, doc = server.run(["--run", "size", "--threads", "1"], timeout=60)
        assert doc["label"] == "size" and doc["pid"] == pid != server.proc.pid
        assert server.alive()
    finally:
        server.stop()


# ---------------------------------------------------------------- under callgrind
SUBSET = "pointwise/(add_scalar_inplace|add)$|views/size$"   # three labels: the runs are valgrind's
AB_LABEL = "add_scalar_inplace"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The subset measured once as it is and once with AB_LABEL doing its statement twice: two runs, whose
    other labels must agree."""
    need_valgrind()
    out = tmp_path_factory.mktemp("instr")
    paths = {}
    for name, extra in (("a", []), ("ab", ["--extra-work", AB_LABEL])):
        paths[name] = out / f"{name}.json"
        cmd = [sys.executable, "-m", "opbench_tools.instr_counts", "run", "--build-dir", str(BUILD),
               "--filter", SUBSET, "--jobs", "2", "--no-wall", "--out", str(paths[name]), *extra]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
    return paths


def _load_results(path):
    return {b["name"]: b for b in json.loads(Path(path).read_text())["benchmarks"]}


def test_results_are_google_benchmark_shaped(runs):
    doc = json.loads(runs["a"].read_text())
    assert doc["context"]["opbench_suite"] == "instruction_counts"
    assert doc["context"]["failures"] == []
    names = {b["name"] for b in doc["benchmarks"]}
    assert names == {f"Instr/pointwise/add_scalar_inplace/fwd/t{t}" for t in (1, 2)} | \
        {f"Instr/pointwise/add/{v}/t{t}" for v in ("fwd", "fwdbwd") for t in (1, 2)} | \
        {f"Instr/views/size/fwd/t{t}" for t in (1, 2)}
    for b in doc["benchmarks"]:
        assert b["run_type"] == "iteration" and b["time_unit"] == "ns"
        assert b["instructions"] > 0 and len(b["repeats"]) == 3
    res = _load_results(runs["a"])
    # A few instructions for size(), thousands for an op, tens of thousands with autograd.
    assert res["Instr/views/size/fwd/t1"]["instructions"] < 200
    assert 1000 < res["Instr/pointwise/add/fwd/t1"]["instructions"] < 50000
    assert res["Instr/pointwise/add/fwdbwd/t1"]["instructions"] > \
        5 * res["Instr/pointwise/add/fwd/t1"]["instructions"]


def test_two_runs_agree_within_0_1_percent_and_diff_names_the_one_change(runs, capsys):
    a, ab = _load_results(runs["a"]), _load_results(runs["ab"])
    assert a.keys() == ab.keys()
    for name in a:   # the labels the extra work leaves alone: two processes, the same counts
        if f"/{AB_LABEL}/" not in name:
            assert abs(ab[name]["instructions"] / a[name]["instructions"] - 1) <= 0.001, name
    assert instr_counts.main(["diff", str(runs["a"]), str(runs["a"])]) == 0
    capsys.readouterr()
    assert instr_counts.main(["diff", str(runs["a"]), str(runs["ab"])]) == 1
    changed = [line.split()[-1] for line in capsys.readouterr().out.splitlines() if line.strip().endswith(("/t1", "/t2"))]
    assert changed and all(f"/{AB_LABEL}/" in name for name in changed), changed


def test_extra_work_moves_that_count_only(runs):
    a, ab = _load_results(runs["a"]), _load_results(runs["ab"])
    moved = [name for name in a if f"/{AB_LABEL}/" in name]   # the others: the test above
    assert moved
    for name in moved:
        ratio = ab[name]["instructions"] / a[name]["instructions"]
        assert 1.8 < ratio < 2.2, (name, ratio)
    assert json.loads(runs["ab"].read_text())["context"]["extra_work"] == AB_LABEL


def test_compare_reports_the_ab_change(runs, tmp_path):
    out = tmp_path / "cmp.json"
    r = subprocess.run([sys.executable, "-m", "opbench_tools.compare", "--metric", "instructions",
                        "--json", str(out), str(runs["a"]), str(runs["ab"])],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cases = {c["name"]: c for c in json.loads(out.read_text())["cases"]}
    for name, case in cases.items():
        expect = "SLOWER" if f"/{AB_LABEL}/" in name else "SAME"
        assert case["verdict"] == expect, (name, case)
