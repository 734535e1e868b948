"""Tensor-parallel decode (benchmarks/decode/tp_decode.cpp) across two bench_ops processes under gloo on
this CPU, launched the way test_collective.py launches them: every rank makes its own shard of the tiny
GQA model, the TP forward's logits match the whole model's (the check before timing), both ranks
generate the same tokens, and rank 0 alone writes the rows, named by the process count. In a world of
one the TP families have no case."""
import csv
import json

import pytest

from bench_ops_bin import run_bench_ops
from test_collective import launch

ROWS = {"token_per_sec", "memory_bandwidth(GB/s)", "startup_time(s)", "token_latency_p50(ms)",
        "token_latency_p90(ms)", "allreduce_share(%)", "power(W)", "energy_per_token(J)"}


def test_tp2_decode_matches_the_whole_model_and_rank0_writes_the_rows(tmp_path):
    results = launch(2, "--benchmark_filter=^Llama2TP/", f"--benchmark_out={tmp_path / 'run.json'}",
                     "--output", tmp_path / "rows.csv", timeout=120)
    for rank, (code, out, err) in enumerate(results):
        assert code == 0, f"rank {rank} exit {code}\n{out}\n{err}"
        assert err.count("check: the TP forward's logits and the whole model's within") == 2, err
        assert f"rank {rank}:" in err and "streamed per token by each of 2 ranks" in err

    run = json.loads((tmp_path / "run.json").read_text())
    entries = [b for b in run["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    assert [b["name"] for b in entries] == ["Llama2TP/bf16/tiny-gqa-2L-tp2/eager", "Llama2TP/int8/tiny-gqa-2L-tp2/eager"]
    for b in entries:
        assert not b.get("error_occurred") and not b.get("skipped"), b
        assert "gloo ranks=2" in b["label"] and b["ranks"] == 2 and b["samples"] == 5
        assert b["allreduce_ms/token"] > 0 and b["allreduce_%token"] > 0   # timed apart: gloo under load may pass 100
        assert b["aggregate_GB/s"] == pytest.approx(b["GB/s"] * 2) and b["rank_GB"] < b["model_GB"]
    theirs = json.loads((tmp_path / "run.rank1.json").read_text())
    assert [b["name"] for b in theirs["benchmarks"]] == [b["name"] for b in run["benchmarks"]]

    header, *rows = list(csv.reader((tmp_path / "rows.csv").open()))
    col = {name: i for i, name in enumerate(header)}
    keys = {(r[col["name"]], r[col["dtype"]], r[col["metric"]]) for r in rows}
    assert keys == {(f"llama2_tiny_{d}_tp_n2", dtype, m) for d, dtype in (("bf16", "bfloat16"), ("int8", "int8"))
                    for m in ROWS}
    assert len(rows) == len(keys)                               # written once: by rank 0


def test_a_world_of_one_has_no_tp_case():
    proc = run_bench_ops("--benchmark_list_tests")
    assert proc.returncode == 0, proc.stderr
    assert "TP/" not in proc.stdout
