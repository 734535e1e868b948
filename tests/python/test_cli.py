"""bench_ops' command line as a user meets it: --version, --opbench_list, the compact console view,
Google Benchmark flags honoured or refused with what to use instead, whole-number flags."""
import subprocess

from bench_ops_bin import bench_ops, run_bench_ops as run

FAST = ["--opbench_max_time=0.01", "--opbench_min_samples=3"]




def test_version_names_opbench_torch_and_google_benchmark():
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("bench_ops (opbench ") and "torch 2.11" in proc.stdout
    assert "Google Benchmark 1." in proc.stdout


def test_list_describes_every_family_without_running():
    proc = run("--opbench_list")
    assert proc.returncode == 0
    with_cases = {name.split("/")[0] for name in run("--benchmark_list_tests").stdout.split()}
    assert len(with_cases) > 3
    for family in with_cases | {"Ceiling"}:                                   # Ceiling: no case on the CPU
        assert f"\n{family}: " in "\n" + proc.stdout
    assert "experiment layer_norm (memory_bandwidth(GB/s))" in proc.stdout
    assert "cuda(GPU)" in proc.stdout and "copy(GPU)[copy ceiling]" in proc.stdout
    assert "Experiments on" not in proc.stdout
    # shapes as the cases name them, not as raw dims ("0x32")
    assert "GPU shapes: 7b-32L\n  CPU shapes: tiny-2L" in proc.stdout
    assert "GPU shapes: 8B 64B 512B 4KiB" in proc.stdout


def test_compact_view_fits_a_terminal_with_one_header():
    proc = run("--benchmark_filter=^(LayerNorm|MLP)/", *FAST)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("bench_ops on ")
    assert sum(1 for line in lines if line.startswith("case ")) == 1          # one header
    case_lines = [line for line in lines if line.startswith(("LayerNorm/", "MLP/")) and "unavailable" not in line]
    assert len(case_lines) == 7
    unavailable = [line for line in lines if line.endswith("/inductor  unavailable: no inductor package (--opbench_inductor_build)")]
    assert len(unavailable) == 7   # their packages are not built here: one line each, no failure
    assert max(len(line) for line in lines if not line.startswith(("Experiments", "experiment", "layer_norm", "mlp_"))) <= 100
    assert "/iterations:1" not in proc.stdout and "WARNING" not in proc.stdout
    assert all("u " not in line.split()[3] for line in case_lines)           # TFLOP/s not in SI suffixes
    assert "nan" not in proc.stdout


def test_time_unit_is_honoured_and_full_view_is_google_benchmarks_table():
    proc = run("--benchmark_filter=^Gemv/bf16/64/", "--benchmark_time_unit=ns", *FAST)
    assert proc.returncode == 0 and " ns " in proc.stdout
    full = run("--benchmark_filter=^Gemv/bf16/64/", "--opbench_console=full", "--benchmark_counters_tabular=false", *FAST)
    assert full.returncode == 0 and "Iterations" in full.stdout


def test_flags_that_would_be_ignored_are_refused_with_the_alternative():
    min_time = run("--benchmark_min_time=2")
    assert min_time.returncode == 2 and "--opbench_max_time" in min_time.stderr
    tabular = run("--benchmark_counters_tabular=false")
    assert tabular.returncode == 2 and "--opbench_console=full" in tabular.stderr
    fraction = run("--opbench_min_samples=1.5")
    assert fraction.returncode == 2 and "expected a whole number" in fraction.stderr


def test_a_filter_starting_with_a_family_selects_that_family_only():
    listed = run("--benchmark_list_tests", "--benchmark_filter=Gemv/.*").stdout.split()
    assert listed and all(name.startswith("Gemv/") for name in listed)
    assert any(n.startswith("GatherGemv/") for n in run("--benchmark_list_tests", "--benchmark_filter=Gemv").stdout.split())


def test_repetition_aggregates_read_as_what_they_are():
    proc = run("--benchmark_filter=^Gemv/bf16/64/", "--benchmark_repetitions=3", *FAST)
    assert proc.returncode == 0, proc.stderr
    cv = [line for line in proc.stdout.splitlines() if line.startswith("Gemv/bf16/64/aten_cv")]
    assert len(cv) == 1 and cv[0].endswith("%") and float(cv[0].split()[1]) < 100
    assert "nan" not in proc.stdout.lower()
