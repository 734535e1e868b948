"""The hostile-input suite of the Python tools (issue #38): generated probes of every console script, run
in-process (main(argv), SystemExit caught, stdout and stderr captured) so that hundreds take seconds.

Each probe asserts the exit code, that an error is one line on stderr and no traceback anywhere, and that
no file of the probe folder (the inputs, an existing output) was changed, removed or added, unless the
probe expects that output. Inputs: malformed and extreme JSON, CSV and traces, folders, FIFOs, devices,
symbolic-link loops, missing files; bad option values; outputs that are inputs, folders or unwritable.
"""
import contextlib
import io
import json
import os
import pathlib

import pytest

from opbench_tools import (changepoints, compare, gate, gate_selftest, instr_counts, make_targets, plot_sweep, shard,
                           trace_util)

GOOD_CASE = {"name": "A/bf16/1/aten", "run_type": "iteration", "iterations": 1, "time_unit": "us",
             "real_time": 10.0, "cpu_time": 10.0, "GB/s": 5.0, "bytes": 4096.0, "instructions": 100.0}


def good_run(factor=1.0):
    entries = [dict(GOOD_CASE, repetition_index=i, real_time=10.0 * factor + 0.01 * i) for i in range(10)]
    return json.dumps({"context": {"opbench_processes": 10}, "benchmarks": entries})


def entry_run(**fields):
    return json.dumps({"benchmarks": [dict(GOOD_CASE, **fields)]})


ROWS_HEADER = "name,metric,target,actual,dtype,device,arch,is_model,backend\n"
# Contents every reader must refuse (exit 2) or read as something odd but valid (exit 0 or 1): label ->
# (bytes, refused). A JSON reader sees CSV as malformed and the CSV readers see JSON as a CSV without
# the columns they need, so these are unusable wherever they go, unless marked otherwise.
CONTENTS = {
    "empty": (b"", True),
    "spaces": (b" \n\t ", True),
    "null": (b"null", True),
    "list": (b"[]", True),
    "object": (b"{}", True),
    "truncated": (good_run()[:200].encode(), True),
    "bom": (b"\xef\xbb\xbf" + good_run().encode(), True),
    "latin1": ('{"benchmarks": [{"name": "caf\xe9"}]}'.encode("latin-1"), True),
    "nul": (b"\x00" * 64, True),
    "nested": (b"[" * 100_000 + b"]" * 100_000, True),
    "huge_int": (b'{"benchmarks": [{"name": "a", "real_time": ' + b"9" * 5000 + b"}]}", True),
    "trailing": (good_run().encode() + b" x", True),
    "dup_top": (b'{"benchmarks": [], "benchmarks": []}', True),
    "dup_entry": (b'{"benchmarks": [{"name": "a", "name": "b"}]}', True),
    "bench_number": (b'{"benchmarks": 5}', True),
    "bench_items": (b'{"benchmarks": [1, "x", null]}', True),
    "no_name": (entry_run(name=None).encode(), True),
    "name_int": (entry_run(name=7).encode(), True),
    "unit": (entry_run(time_unit="fortnight").encode(), True),
    "time_text": (entry_run(real_time="fast").encode(), True),
    "time_list": (entry_run(real_time=[1, 2]).encode(), True),
    "no_cases": (b'{"benchmarks": []}', True),
    "csv": (ROWS_HEADER.encode() + b"a,b,1,2,bf16,cuda,X,False,aten\n", True),
    "context_list": (b'{"context": [], "benchmarks": [{"name": "Z/x/1/y", "real_time": 1}]}', True),
    "time_nan": (entry_run(real_time=float("nan")).encode(), False),
    "time_inf": (entry_run(real_time=float("inf")).encode(), False),
    "time_big": (b'{"benchmarks": [{"name": "A/bf16/1/aten", "real_time": 1' + b"0" * 400 + b"}]}", False),
    "time_negative": (entry_run(real_time=-1.0).encode(), False),
    "time_zero": (entry_run(real_time=0).encode(), False),
    "reps_text": (entry_run(run_type="aggregate", aggregate_name=3, repetitions="many").encode(), False),
    "error_dict": (entry_run(error_occurred=True, error_message={"a": 1}).encode(), False),
    "skipped": (entry_run(skipped="yes", skip_message="line\nbreak").encode(), False),
    "newline_name": (entry_run(name="A/bf16/1/aten\nFAIL").encode(), False),
    "long_name": (entry_run(name="A/" + "x" * 100_000).encode(), False),
    "many_keys": (entry_run(**{f"k{i}": i for i in range(5000)}).encode(), False),
    "bytes_text": (entry_run(bytes="lots", **{"GB/s": "fast"}).encode(), False),
}
# Paths that are not readable files: each refused in one line.
SPECIAL = ["{missing}", "{folder}", "{fifo}", "{loop}", "{dangling}", "/dev/zero", "", "{folder}/"]
INPUTS = [f"{{c_{label}}}" for label in CONTENTS] + SPECIAL


# Contents that are valid input at one place: an empty policy, an empty trace (no GPU events), experiment
# rows, a results file whose times are odd but whose instruction counts are fine.
VALID_AT = {"--policy": {"object"}, "trace": {"list"}, "targets": {"csv"}, "--experiments": {"csv"},
            "instr": {"unit", "time_text", "time_list"}}


def refused(path_key, place):
    label = path_key[3:-1] if path_key.startswith("{c_") else None
    return label is None or (CONTENTS[label][1] and label not in VALID_AT.get(place, ()))


def file_probes():
    """(tool, argv, allowed exit codes) with one hostile input in each place a tool reads a file."""
    places = {
        "compare": (["{x}", "{good}"], ["{good}", "{x}"]),
        "gate": (["{x}", "{good}"], ["{good}", "{x}"], ["--policy", "{x}", "{good}", "{good}"],
                 ["--experiments", "{x}"]),
        "plot": (["{x}", "--out", "{outdir}/new.png"],),
        "trace": (["{x}"],),
        "instr": (["diff", "{x}", "{good}"],),
        "targets": (["{x}", "--device", "X"],),
        "selftest": (["--binary", "{missing}", "--filter", ".", "--policy", "{x}"],),
        "changepoints": (["{x}"],),
    }
    for tool, argvs in places.items():
        for argv in argvs:
            place = argv[0] if argv[0].startswith("--") else tool
            for x in INPUTS:
                codes = {2} if refused(x, place) or tool == "selftest" else {0, 1, 2}
                yield tool, [x if a == "{x}" else a for a in argv], codes


def option_probes():
    """Bad option values, outputs that clash with inputs or cannot be written: exit 2."""
    bad = {
        "compare": [["--alpha", v] for v in ("0", "1", "nan", "-1", "inf", "x")]
        + [["--threshold", v] for v in ("-1", "nan", "inf", "x")]
        + [["--repetitions", v] for v in ("0", "-3", "1e9", "10000000")] + [["--jobs", "0"], ["--color", "purple"],
                                                                            ["--metric", "nope"], ["--nope"]],
        "gate": [["--nope"], ["{good}"], ["{good}", "{good}", "{good}"], ["--markdown"]],
    }
    for tool, extra in bad.items():
        for argv in extra:
            runs = [] if tool == "gate" else ["{good}", "{good}"]
            yield tool, runs + argv, {2}
    outputs = ["{good}", "{other}", "{folder}", "{dir}/nowhere/x.md", "{good_link}", "{folder}/"]
    for out in outputs:
        for flag in ("--json", "--markdown"):
            yield "compare", ["{good}", "{other}", flag, out], {2}
        yield "compare", ["{good}", "{other}", "--plot", out.replace(".md", ".png")], {2}
        yield "gate", ["{good}", "{other}", "--markdown", out], {2}
        yield "plot", ["{good}", "--out", out], {2}
    yield "compare", ["{good}", "{other}", "--plot", "{dir}/plot.txt"], {2}
    yield "compare", ["{good}", "{other}", "--json", "{dir}/same.json", "--markdown", "{dir}/same.json"], {2}
    yield from ((t, a, {2}) for t, a in tool_option_probes())


def tool_option_probes():
    for v in ("0", "-1", "1001", "x"):
        yield ["selftest", ["--binary", "{fake}", "--filter", ".", "--rounds", v]]
    for flag, v in (("--slowdown", "0"), ("--slowdown", "nan"), ("--jobs", "0"), ("--repetitions", "1"),
                    ("--time-budget", "-1"), ("--time-budget", "inf")):
        yield "selftest", ["--binary", "{fake}", "--filter", ".", flag, v]
    yield "selftest", ["--binary", "{folder}", "--filter", "."]
    for flag, v in (("--jobs", "-1"), ("--repeats", "0"), ("--timeout", "nan"), ("--timeout", "-5"),
                    ("--retries", "-1"), ("--threads", "a"), ("--threads", "0"), ("--threads", "1,,2"),
                    ("--filter", "("), ("--warn-spread-pct", "nan"), ("--iters", "-2"), ("--out", "{folder}")):
        yield "instr", ["run", flag, v]
    for argv in (["diff", "{good}", "{good}", "--tolerance-pct", "nan"], ["diff", "{good}", "{good}", "--top", "-1"],
                 ["list", "--build-dir", "{missing}"], ["run", "--build-dir", "{missing}", "--valgrind", "sh"],
                 ["frobnicate"], []):
        yield "instr", argv
    for v in ("0", "-1", "nan", "11", "x"):
        yield "targets", ["{rows}", "--device", "X", "--factor", v]
    yield "targets", ["{rows}", "--device", "Nowhere"]
    yield "targets", ["{bad_rows}", "--device", "X"]
    for argv in (["--total-us", "-1"], ["--total-s", "nan"], ["--mm-pattern", "("],
                 ["--total-us", "1", "--total-s", "1"]):
        yield "trace", ["{trace}", *argv]
    yield from (("shard", argv) for argv in shard_probes())
    for argv in (["--alpha", "0"], ["--alpha", "nan"], ["--permutations", "-1"], ["--min-segment", "1"],
                 ["--filter", "("], ["--recent", "-1"], ["--json", "{good}"], ["--markdown", "{folder}"]):
        yield "changepoints", ["{good}", *argv]


def shard_probes():
    base = ["--bench-ops", "{fake}"]
    for v in ("0", "-1", "4097", "x"):
        yield base + ["--shards", v]
    for gpus in ("0,1", ",", "0"):
        yield base + ["--gpus", gpus]
    for flag in ("--opbench_shard=0/2", "--opbench_run_id=ab", "--opbench_markdown=x.md", "--oplog=x.txt",
                 "--benchmark_out_format=csv", "--benchmark_out"):
        yield base + ["--shards", "2", "--", flag]
    for times in ("{missing}", "{folder}", "{fifo}", "/dev/zero"):
        yield base + ["--shards", "2", "--times", times]
    yield ["--bench-ops", "{missing}", "--shards", "2"]
    yield ["--bench-ops", "{folder}", "--shards", "2"]
    yield base + ["--shards", "2", "--", "--output", "{dir}/r.csv", "--benchmark_out={dir}/r.json"]


PROBES = [p for p in file_probes()] + [p for p in option_probes()]
MAINS = {"compare": compare.main, "gate": gate.main, "plot": plot_sweep.main, "trace": trace_util.main,
         "instr": instr_counts.main, "targets": make_targets.main, "selftest": gate_selftest.main,
         "shard": shard.main, "changepoints": changepoints.main}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The probe folder: good inputs, every hostile content, and the special paths."""
    root = tmp_path_factory.mktemp("hostile")
    paths = {"dir": str(root), "outdir": str(tmp_path_factory.mktemp("written")),
             "missing": str(root / "missing.json"), "folder": str(root / "a_folder"),
             "fifo": str(root / "a_fifo"), "loop": str(root / "loop"), "dangling": str(root / "dangling")}
    (root / "a_folder").mkdir()
    os.mkfifo(root / "a_fifo")
    os.symlink(root / "loop", root / "loop")
    os.symlink(root / "gone", root / "dangling")
    files = {"good": good_run(), "other": good_run(1.01), "trace": '{"traceEvents": []}',
             "rows": ROWS_HEADER + "a,m,,5,bf16,cuda,X,False,aten\n",
             "bad_rows": ROWS_HEADER + "a,m,,fast,bf16,cuda,X,False,aten\n"}
    files.update({f"c_{label}": content for label, (content, _) in CONTENTS.items()})
    for key, content in files.items():
        path = root / f"{key}.in"
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        paths[key] = str(path)
    os.symlink(paths["good"], root / "good_link.json")
    paths["good_link"] = str(root / "good_link.json")
    fake = root / "fake_bench_ops"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    paths["fake"] = str(fake)
    return paths


def snapshot(root):
    """{name: (kind, size, mtime, content)} of every entry of the probe folder, links not followed."""
    out = {}
    for path in pathlib.Path(root).rglob("*"):
        st = path.lstat()
        content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        out[str(path)] = (st.st_mode, st.st_size, st.st_mtime_ns, content)
    return out


def call(main, argv):
    """(exit code, stdout, stderr) of main(argv) run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("tool, argv, codes", PROBES, ids=[f"{t}:{' '.join(a)}"[:90] for t, a, _ in PROBES])
def test_probe(folder, monkeypatch, tool, argv, codes):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")   # the host shows no GPU
    monkeypatch.delenv("OPBENCH_BUILD_DIR", raising=False)
    monkeypatch.delenv("OPBENCH_TRACEBACK", raising=False)
    monkeypatch.chdir(folder["dir"])
    args = [a.format(**folder) for a in argv]
    before = snapshot(folder["dir"])
    code, out, err = call(MAINS[tool], args)
    assert code in codes, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in out + err
    if code == 2:   # one line on stderr says why (the gate may say it in its report on stdout instead)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 or (tool == "gate" and not lines and "UNUSABLE" in out), err[-3000:]
        assert all(len(line) < 4000 and line.startswith("opbench-") for line in lines), err[:300]
    assert snapshot(folder["dir"]) == before, "a file of the probe folder changed"


def test_there_are_enough_probes_for_every_tool():
    per_tool = {t: sum(1 for tool, _, _ in PROBES if tool == t) for t in MAINS}
    assert len(PROBES) >= 300 and min(per_tool.values()) >= 10, per_tool


def test_outputs_replace_a_file_atomically_and_write_devices_directly(tmp_path):
    from opbench_tools import cli
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    cli.write_atomically(str(link), "new")
    assert link.is_symlink() and target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "report.md"]   # no temporary left
    cli.write_atomically(os.devnull, "discarded")
    assert pathlib.Path(os.devnull).is_char_device()
