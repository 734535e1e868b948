"""opbench-plot: a PNG from a bench_ops JSON with ceilings as lines; unusable input exits 2."""
import json
import subprocess
import sys

from opbench_tools import plot_sweep

TOOL = ["-m", "opbench_tools.plot_sweep"]


def entry(name, gbps, nbytes, **extra):
    return {"name": name, "run_type": "iteration", "real_time": 1.0, "time_unit": "us", "iterations": 1,
            "GB/s": gbps, "bytes": nbytes, **extra}


def test_plots_families_and_ceilings(tmp_path):
    data = {"context": {"opbench_device": "Test GPU"},
            "benchmarks": [entry("Ceiling/bf16/32768x16384/copy", 3000, 2 ** 31),
                           entry("Ceiling/bf16/32768x16384/read", 3100, 2 ** 30),
                           entry("LayerNorm/bf16/4096x1024/aten", 1500, 2 ** 24),
                           entry("LayerNorm/bf16/4096x4096/aten", 1800, 2 ** 26),
                           entry("Gemv/bf16/1024/cuda", 0, 0, error_occurred=True)]}
    src = tmp_path / "run.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "sweep.png"
    proc = subprocess.run([sys.executable, *TOOL, str(src), "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_ceiling_line_is_the_fastest_stream_of_its_kind_and_size():
    data = {"benchmarks": [entry("Ceiling/bf16/32768x16384/read", 3100, 2 ** 30),
                           entry("Ceiling/bf16/32768x16384/read_cuda", 3300, 2 ** 30),
                           entry("Ceiling/bf16/32768x16384/write_cuda", 3200, 2 ** 30),
                           entry("Ceiling/bf16/32768x16384/write", 3400, 2 ** 30),
                           entry("Ceiling/bf16/8192x16384/read_cuda", 3000, 2 ** 28),
                           entry("Ceiling/bf16/8192x8192x8192/cublas", 900, 2 ** 28),
                           entry("Gemv/bf16/16384/cuda", 3250, 2 ** 29)]}
    families, ceilings = plot_sweep.plottable_cases(data)
    # ours read faster, ATen's wrote faster; the read also at 256 MiB; no GEMM line
    assert ceilings == {"read": {2 ** 28: 3000, 2 ** 30: 3300}, "write": {2 ** 30: 3400}}
    assert list(families) == ["Gemv"]


def test_nothing_to_plot_exits_2(tmp_path):
    src = tmp_path / "empty.json"
    src.write_text(json.dumps({"context": {}, "benchmarks": []}))
    proc = subprocess.run([sys.executable, *TOOL, str(src), "--out", str(tmp_path / "x.png")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "no case" in proc.stderr
    assert not (tmp_path / "x.png").exists()
