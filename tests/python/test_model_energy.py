"""Power and energy in every model row (benchmarks/decode/decode.cpp, tp_decode.cpp): power(W) and
energy_per_token(J) come from NVML's total-energy counter over the timed generations. On a machine
without a GPU (CI) each model experiment still has both rows, with no actual, shown as "-" in the
markdown summary; on a GPU they carry the counters avg_power_W and J/token of every case."""
import csv
import json

from bench_ops_bin import run_bench_ops

ENERGY_ROWS = ("power(W)", "energy_per_token(J)")


def test_model_rows_carry_power_and_energy_or_dash_without_a_gpu(tmp_path):
    rows, md, out = tmp_path / "rows.csv", tmp_path / "rows.md", tmp_path / "run.json"
    proc = run_bench_ops("--benchmark_filter=^(Llama2|Mixtral)/[^/]+/[^/]+/eager$", "--output", rows,
                         "--opbench_markdown", md, f"--benchmark_out={out}")
    assert proc.returncode == 0, proc.stderr
    run = json.loads(out.read_text())
    timed = [b for b in run["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    gpu = not any("tiny" in b["name"] for b in timed)   # the CPU runs the tiny configurations
    assert {b["name"].split("/")[0] for b in timed} == {"Llama2", "Mixtral"}
    header, *body = list(csv.reader(rows.open()))
    col = {name: i for i, name in enumerate(header)}
    energy = {(r[col["name"]], r[col["metric"]]): r[col["actual"]] for r in body if r[col["metric"]] in ENERGY_ROWS}
    experiments = {r[col["name"]] for r in body}
    # the CPU runs the tiny configurations, and its rows say so
    assert experiments == ({"llama2_7b_bf16", "llama2_7b_int8", "llama2_7b_int4", "mixtral_8x7b_int8"} if gpu else
                           {"llama2_tiny_bf16", "llama2_tiny_int8", "llama2_tiny_int4", "mixtral_tiny_int8"})
    assert set(energy) == {(e, m) for e in experiments for m in ENERGY_ROWS}
    summary = [line for line in md.read_text().splitlines() if any(m in line for m in ENERGY_ROWS)]
    assert len(summary) == 2 * len(experiments)
    if gpu:
        assert all(float(v) > 0 for v in energy.values()), energy
        assert all(b["avg_power_W"] > 0 and b["J/token"] > 0 for b in timed)
    else:
        assert all(v == "" for v in energy.values()), energy
        assert all("avg_power_W" not in b and "J/token" not in b for b in timed)
        assert all("| - |" in line for line in summary), summary
