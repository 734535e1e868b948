"""opbench-make-targets: the stated rule, and a file bench_ops accepts."""
import json
import subprocess
import sys

from bench_ops_bin import bench_ops

TOOL = ["-m", "opbench_tools.make_targets"]
ROWS = """name,metric,target,actual,dtype,device,arch,is_model,backend,pct_of_target,pct_of_peak,pct_of_ceiling,cases,status
layer_norm,memory_bandwidth(GB/s),,1848.073143,bfloat16,cuda,NVIDIA H200,False,aten,,38.5,,4,no target
mlp_layer_norm_gelu,flops_utilization,,0.002292,bfloat16,cuda,NVIDIA H200,False,aten,,0.23,,4,no target
gemv,memory_bandwidth(GB/s),,999.0,bfloat16,cuda,NVIDIA A100-SXM4-40GB,False,aten,,,,4,no target
"""


def test_rule_is_factor_times_actual_rounded_down_to_3_significant_figures(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text(ROWS)
    out = subprocess.run([sys.executable, *TOOL, str(rows), "--device", "NVIDIA H200"],
                         capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    values = {(t["experiment"], t["dtype"]): t["target"] for t in doc["targets"]}
    assert values == {("layer_norm", "bfloat16"): 1750.0, ("mlp_layer_norm_gelu", "bfloat16"): 0.00217}
    assert "0.95 x the measured actual" in doc["rule"]
    targets = tmp_path / "h200.json"
    targets.write_text(out)
    listed = subprocess.run([str(bench_ops()), "--targets", str(targets), "--benchmark_filter=LayerNorm/fp32/64x256",
                             "--opbench_max_time=0.02"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr


def test_no_rows_for_the_device_is_an_error(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text(ROWS)
    proc = subprocess.run([sys.executable, *TOOL, str(rows), "--device", "NVIDIA L4"], capture_output=True, text=True)
    assert proc.returncode != 0 and "no rows" in proc.stderr


def test_collective_rows_give_targets_per_rank_count_that_bench_ops_accepts(tmp_path):
    """collective_n8 targets (from an 8-GPU run) load on a one-GPU run; a zero bus bandwidth (all_reduce
    with one rank) gets no target rather than a crash or a target of 0."""
    rows = tmp_path / "rows.csv"
    rows.write_text(ROWS.splitlines()[0] + "\n"
                    "collective_n8,bus_bandwidth(GB/s),,361.5,bfloat16,cuda,NVIDIA H200,False,all_reduce,,,,10,no target\n"
                    "collective_n1,bus_bandwidth(GB/s),,0.000000,bfloat16,cuda,NVIDIA H200,False,all_reduce,,,,10,no target\n")
    out = subprocess.run([sys.executable, *TOOL, str(rows), "--device", "NVIDIA H200"],
                         capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    assert [(t["experiment"], t["backend"], t["target"]) for t in doc["targets"]] == [("collective_n8", "all_reduce", 343.0)]
    targets = tmp_path / "h200.json"
    targets.write_text(out)
    run = subprocess.run([str(bench_ops()), "--targets", str(targets), "--benchmark_filter=Collective/fp32/8B/broadcast"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
