"""The Collective family across processes on this CPU machine: 2 and 4 bench_ops under gloo, joined the
way torchrun joins them (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT: a free port).
Every case passes its exact check on every rank, rank 0 alone writes the rows (named by the process
count, so targets differ by GPU count), a wrong result on one rank skips the case everywhere without a
hang, and a rank that dies fails the cases of the others with a message, the rows before it kept. A
world of one has no bus bandwidth but broadcast's. An unusable launch environment is one line and exit
2. The Python peer (gpu_checks/collectives_torch_distributed.py) runs its table and comparison on gloo."""
import csv
import json
import os
import platform
import socket
import subprocess
import sys
import time

import pytest

from bench_ops_bin import ROOT, bench_ops, run_bench_ops

OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]
DTYPES = ["bfloat16", "float32"]


def bus_factor(op, n):   # nccl-tests' PERFORMANCE.md
    return {"all_reduce": 2 * (n - 1) / n, "broadcast": 1.0}.get(op, (n - 1) / n)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(ranks, *args, extra_env=None, timeout=180):
    """Runs `ranks` bench_ops as one world; [(returncode, stdout, stderr)] by rank."""
    port = free_port()
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), CUDA_VISIBLE_DEVICES="",   # gloo, also on a GPU host
                   **(extra_env or {}))
        procs.append(subprocess.Popen([str(bench_ops()), *map(str, args)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    try:
        outputs = [p.communicate(timeout=timeout) for p in procs]
        return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs)]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def cpu_device_name():
    """bench_ops' device name on a CPU run (the first 'model name' of /proc/cpuinfo), what targets match."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


@pytest.mark.parametrize("ranks", [2, 4])
def test_collective_family_runs_on_every_gloo_rank_and_rank0_writes_the_rows(tmp_path, ranks):
    targets = tmp_path / "targets.json"   # all_reduce bf16: a target met with 2 ranks, missed with 4
    entry = '{"experiment": "collective_n%d", "metric": "bus_bandwidth(GB/s)", "dtype": "bfloat16", ' \
            '"backend": "all_reduce", "target": %s}'
    targets.write_text(json.dumps({"devices": [cpu_device_name()], "rule": "test",
                                   "targets": [json.loads(entry % (2, "1e-9")), json.loads(entry % (4, "1e9"))]}))
    results = launch(ranks, "--benchmark_filter=Collective/", f"--benchmark_out={tmp_path / 'run.json'}",
                     "--output", tmp_path / "rows.csv", "--targets", targets)
    for rank, (code, out, err) in enumerate(results):
        assert code == 0, f"rank {rank} exit {code}\n{out}\n{err}"
    assert f"collective_n{ranks}" in results[0][1]              # rank 0's summary
    assert all(out == "" for _, out, _ in results[1:])          # the other ranks print nothing

    run = json.loads((tmp_path / "run.json").read_text())
    assert run["context"]["opbench_world"] == f"rank 0 of {ranks}"
    entries = [b for b in run["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    assert len(entries) == len(DTYPES) * 3 * len(OPS)           # 8 B, 1 KiB, 1 MiB on the CPU
    for b in entries:
        assert not b.get("error_occurred") and not b.get("skipped"), b   # the exact check passed
        op = b["name"].split("/")[-1]
        assert b["ranks"] == ranks and b["samples"] == 20
        assert b["busbw_GB/s"] == pytest.approx(b["GB/s"] * bus_factor(op, ranks))
        assert f"gloo ranks={ranks}" in b["label"]
        assert "%peak" not in b and "%ceiling" not in b         # link traffic is held to no HBM figure
    for rank in range(1, ranks):                                # each rank's own file, the same cases
        theirs = json.loads((tmp_path / f"run.rank{rank}.json").read_text())
        assert [b["name"] for b in theirs["benchmarks"]] == [b["name"] for b in run["benchmarks"]]

    header, *rows = list(csv.reader((tmp_path / "rows.csv").open()))
    col = {name: i for i, name in enumerate(header)}
    keys = {(r[col["name"]], r[col["dtype"]], r[col["backend"]], r[col["metric"]]) for r in rows}
    assert keys == {(f"collective_n{ranks}", d, op, "bus_bandwidth(GB/s)") for d in DTYPES for op in OPS}
    assert len(rows) == len(keys)                               # written once: by rank 0
    for r in rows:
        assert r[col["cases"]] == "3" and r[col["device_id"]] == "cpu" and float(r[col["actual"]]) > 0
    all_reduce = next(r for r in rows if r[col["backend"]] == "all_reduce" and r[col["dtype"]] == "bfloat16")
    assert all_reduce[col["status"]] == ("meets target" if ranks == 2 else "below target")
    assert len((tmp_path / "rows.json").read_text().splitlines()) == len(rows)


def test_a_wrong_result_on_one_rank_skips_the_case_on_every_rank_without_a_hang(tmp_path):
    results = launch(2, "--benchmark_filter=Collective/fp32/1KiB/", f"--benchmark_out={tmp_path / 'run.json'}",
                     extra_env={"OPBENCH_COLLECTIVE_CORRUPT_RANK": "1"}, timeout=120)
    assert [code for code, _, _ in results] == [1, 1]
    run = json.loads((tmp_path / "run.json").read_text())
    assert len(run["benchmarks"]) == len(OPS)
    for b in run["benchmarks"]:
        message = b.get("error_message") or b.get("skip_message")
        assert "the exact check failed on rank 1" in message, b
    # rank 1 says what it found, element and values
    assert "the exact check failed on rank 1: element 0 of" in results[1][2]


@pytest.mark.parametrize("env, says", [
    ({"WORLD_SIZE": "2"}, "WORLD_SIZE=2 is set but RANK is not"),
    ({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}, "RANK=2 is not below WORLD_SIZE=2"),
    ({"RANK": "0", "WORLD_SIZE": "2"}, "WORLD_SIZE=2 needs MASTER_ADDR and MASTER_PORT"),
    ({"RANK": "0", "WORLD_SIZE": "two"}, "WORLD_SIZE=two: expected a whole number"),
])
def test_an_unusable_launch_environment_is_refused_in_one_line(env, says):
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    proc = subprocess.run([str(bench_ops()), "--benchmark_filter=Collective/"], env={**clean, **env},
                          capture_output=True, text=True, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("bench_ops: ") and says in lines[0]


def test_a_rank_that_dies_fails_the_cases_of_the_others_with_a_message_not_a_hang(tmp_path):
    """Rank 1 _exits at its first collective of the second case: rank 0 fails that case and every later
    one at once, names the failure, and keeps the first case's entry and row."""
    start = time.monotonic()
    results = launch(2, "--benchmark_filter=Collective/fp32/8B/", f"--benchmark_out={tmp_path / 'run.json'}",
                     "--output", tmp_path / "rows.csv", timeout=60,
                     extra_env={"OPBENCH_COLLECTIVE_EXIT_RANK": "1", "OPBENCH_COLLECTIVE_EXIT_AT": "fp32/8B/all_gather",
                                "OPBENCH_COLLECTIVE_TIMEOUT_S": "20"})
    assert time.monotonic() - start < 30
    assert results[1][0] == 3 and "rank 1 exits at Collective/fp32/8B/all_gather" in results[1][2]
    assert results[0][0] == 1, results[0]
    run = {b["name"]: b for b in json.loads((tmp_path / "run.json").read_text())["benchmarks"]}
    assert not run["Collective/fp32/8B/all_reduce"].get("error_occurred")
    failed = run["Collective/fp32/8B/all_gather"]
    assert "Collective: the agreement all_reduce failed on rank 0 of 2 (gloo)" in failed["error_message"], failed
    for op in OPS[2:]:
        assert "unusable since an earlier failure" in run[f"Collective/fp32/8B/{op}"]["error_message"]
    header, *rows = list(csv.reader((tmp_path / "rows.csv").open()))
    by_op = {r[header.index("backend")]: r for r in rows}
    assert float(by_op["all_reduce"][header.index("actual")]) > 0
    assert by_op["all_gather"][header.index("status")] == "incomplete: 1 of 1 cases failed"


def test_a_world_of_one_needs_no_launcher_and_has_no_bus_bandwidth_but_broadcasts(tmp_path):
    proc = run_bench_ops("--benchmark_filter=Collective/fp32/8B/", f"--benchmark_out={tmp_path / 'run.json'}",
                         "--output", str(tmp_path / "rows.csv"))
    assert proc.returncode == 0, proc.stderr
    assert "collective_n1" in proc.stdout
    for b in json.loads((tmp_path / "run.json").read_text())["benchmarks"]:
        op = b["name"].split("/")[-1]
        assert ("busbw_GB/s" in b) == (op == "broadcast"), b   # one rank moves nothing over a bus
    header, *rows = list(csv.reader((tmp_path / "rows.csv").open()))
    col = {name: i for i, name in enumerate(header)}
    for r in rows:
        if r[col["backend"]] == "broadcast":
            assert float(r[col["actual"]]) > 0
        else:
            assert r[col["actual"]] == "" and r[col["status"]].startswith("no actual: not applicable"), r


def test_the_python_peer_prints_its_table_and_bench_ops_figures_beside_it(tmp_path):
    """gpu_checks/collectives_torch_distributed.py on 2 gloo processes with tiny sizes: its table, its JSON
    and the comparison with a bench_ops JSON (busbw ratio, graph 8 B all_reduce against eager latency)."""
    bench = {"benchmarks": [
        {"name": "Collective/fp32/8B/all_reduce", "run_type": "iteration", "real_time": 9.0, "time_unit": "us",
         "busbw_GB/s": 0.004},
        {"name": "Collective/fp32/8B/all_reduce_graph", "run_type": "iteration", "real_time": 2.5,
         "time_unit": "us", "busbw_GB/s": 0.01}]}
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    port = free_port()
    script = ROOT / "gpu_checks" / "collectives_torch_distributed.py"
    procs = [subprocess.Popen([sys.executable, str(script), "--backend", "gloo", "--device", "cpu", "--max-bytes", "64",
                               "--iters", "2", "--warmup", "1", "--dtypes", "fp32", "--compare", str(tmp_path / "bench.json"),
                               "--json", str(tmp_path / "peer.json")],
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                                       MASTER_PORT=str(port), CUDA_VISIBLE_DEVICES=""),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(2)]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    table = outputs[0][0]
    assert "torch.distributed gloo, 2 rank(s)" in table and outputs[1][0] == ""
    assert "8 B all_reduce fp32: bench_ops graph 2.50 us" in table
    peer = json.loads((tmp_path / "peer.json").read_text())
    assert {(r["op"], r["size"]) for r in peer["results"]} == {(op, s) for op in OPS for s in ("8B", "64B")}
    for r in peer["results"]:
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * bus_factor(r["op"], 2))
    mine = next(r for r in peer["results"] if r["op"] == "all_reduce" and r["size"] == "8B")
    row = next(c for c in peer["compare"] if c["op"] == "all_reduce" and c["size"] == "8B")
    assert row["ratio"] == pytest.approx(0.004 / mine["busbw_GBps"])
    assert row["graph_ratio"] == pytest.approx(0.01 / mine["busbw_GBps"])
    assert peer["graph_latency"][0]["ratio"] == pytest.approx(2.5 / peer["eager_all_reduce_8B_us"]["fp32"])
    assert all(c["ratio"] is None for c in peer["compare"] if c["size"] == "64B")   # not in bench_ops' JSON


def test_torchrun_launches_the_ranks(tmp_path):
    """`torchrun --nproc-per-node=2 --no-python bench_ops`: the ranks meet through torchrun's own store
    (TORCHELASTIC_USE_AGENT_STORE), rank 0 writes the rows, rank 1 its rank-suffixed JSON."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                           "--no-python", str(bench_ops()), "--benchmark_filter=Collective/fp32/8B/",
                           "--output", str(tmp_path / "rows.csv"), f"--benchmark_out={tmp_path / 'run.json'}"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, *rows = list(csv.reader((tmp_path / "rows.csv").open()))
    assert {r[header.index("name")] for r in rows} == {"collective_n2"} and len(rows) == len(OPS)
    theirs = json.loads((tmp_path / "run.rank1.json").read_text())
    assert theirs["context"]["opbench_world"] == "rank 1 of 2" and len(theirs["benchmarks"]) == len(OPS)
