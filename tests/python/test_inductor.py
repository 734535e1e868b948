"""The `inductor` backend on the CPU: AOTInductor compiles for the CPU too, so CI builds real packages at
the small shapes, loads them into bench_ops, checks and times them. Two compiles in all (~30 s each on two
cores): LayerNorm's (inputs only) and MLP's (parameters loaded by name from bench_ops' own tensors)."""
import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from bench_ops_bin import ROOT, bench_ops, run_bench_ops as run

pytest.importorskip("torch")

BUILD = ROOT / "inductor" / "build_packages.py"
LAYER_NORM = "LayerNorm/fp32/64x256/inductor"
MLP = "MLP/bf16/64x256/inductor"
FAST = ["--opbench_max_time=0.05", "--opbench_min_samples=3"]


def exact(case):
    return f"^{case}$"


def build_packages(case, cache, *extra):
    return subprocess.run([sys.executable, str(BUILD), "--bench-ops", str(bench_ops()), "--filter", exact(case),
                           "--", f"--opbench_inductor_cache={cache}", *extra],
                          capture_output=True, text=True, timeout=600)


def run_case(case, cache, tmp_path, *extra):
    out = tmp_path / "run.json"
    proc = run(f"--benchmark_filter={exact(case)}", f"--opbench_inductor_cache={cache}", *FAST,
               f"--benchmark_out={out}", "--benchmark_out_format=json", *extra)
    runs = [b for b in json.loads(out.read_text())["benchmarks"] if b["name"].startswith(case)]
    return proc, runs


def plan(cache, case):
    proc = run(f"--benchmark_filter={exact(case)}", f"--opbench_inductor_cache={cache}", "--opbench_inductor_plan=-")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_missing_package_skips_the_case_with_the_command_that_builds_it(tmp_path):
    proc, runs = run_case(LAYER_NORM, tmp_path / "cache", tmp_path)
    assert proc.returncode == 0, proc.stderr   # unavailable is not a failure
    assert runs[0]["error_message"] == "unavailable: no inductor package (--opbench_inductor_build)"
    assert f"{LAYER_NORM}  unavailable: no inductor package" in proc.stdout   # one line, within 100 columns
    advice = proc.stderr[proc.stderr.index("1 inductor case(s) skipped for want of a current package"):]
    assert "inductor/build_packages.py' --bench-ops '" in advice
    assert "--filter '^LayerNorm/fp32/64x256/inductor$'" in advice   # the run's filter
    assert f"'--opbench_inductor_cache={tmp_path / 'cache'}'" in advice


def test_the_plan_names_module_key_and_state_of_each_selected_case(tmp_path):
    p = plan(tmp_path, "(LayerNorm/fp32/64x256|Gemv/int8/64)/inductor")
    assert [e["case"] for e in p["packages"]] == ["Gemv/int8/64/inductor", LAYER_NORM]   # registration order
    entry = p["packages"][1]
    assert entry["module"].endswith("benchmarks/layer_norm/layer_norm.py") and entry["state"] == "missing"
    assert entry["key"]["opbench_case"] == LAYER_NORM and entry["key"]["opbench_torch"] == p["torch"]
    assert p["device_type"] == "cpu" and pathlib.Path(p["settings"]["path"]).name == "settings.json"


def test_built_packages_run_checked_and_timed_and_a_stale_one_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    built = build_packages(LAYER_NORM, cache)
    assert built.returncode == 0, built.stderr
    assert f"{LAYER_NORM}: built in" in built.stderr

    proc, runs = run_case(LAYER_NORM, cache, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "error_message" not in runs[0] and runs[0]["real_time"] > 0 and runs[0]["compile_s"] > 0

    again = build_packages(LAYER_NORM, cache)   # a warm cache builds nothing
    assert again.returncode == 0 and "0 built, 0 failed, 1 already current" in again.stderr

    # LayerNorm's package where MLP's belongs: its key names another case, so it is stale, never loaded
    mlp_path = pathlib.Path(plan(cache, MLP)["packages"][0]["package"])
    shutil.copy(plan(cache, LAYER_NORM)["packages"][0]["package"], mlp_path)
    assert plan(cache, MLP)["packages"][0]["state"].startswith(
        f"stale: opbench_case is {LAYER_NORM}, this run needs {MLP}")
    proc, runs = run_case(MLP, cache, tmp_path)
    assert runs[0]["error_message"].startswith("unavailable: inductor package stale: opbench_case is")

    rebuilt = build_packages(MLP, cache)   # the stale package is rebuilt; MLP's parameters come from bench_ops
    assert rebuilt.returncode == 0 and f"{MLP}: stale: " in rebuilt.stderr and f"{MLP}: built in" in rebuilt.stderr
    proc, runs = run_case(MLP, cache, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "error_message" not in runs[0] and runs[0]["real_time"] > 0


def test_the_builder_refuses_a_plan_it_cannot_build(tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({"torch": "0.0.1", "device": "cpu", "device_type": "cpu",
                               "settings": {"path": str(ROOT / "inductor/settings.json"), "hash": "0"}, "packages": []}))
    proc = subprocess.run([sys.executable, str(BUILD), "--plan", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2 and "torch" in proc.stderr and "0.0.1" in proc.stderr


def test_a_decode_model_runs_its_compiled_step_checked_against_aten(tmp_path):
    """gpt-fast's decode step (benchmarks/decode/model.py) at the tiny MoE configuration: the C++ model's
    weights and KV cache loaded into the package by name, its logits checked against the ATen forward
    made to follow the experts the package chose, then timed; its row carries compilation_time(s)."""
    case, cache, rows = "Mixtral/int8/tiny-moe-2L/inductor", tmp_path / "cache", tmp_path / "rows.csv"
    built = build_packages(case, cache)
    assert built.returncode == 0, built.stderr
    proc, runs = run_case(case, cache, tmp_path, f"--output={rows}")
    assert proc.returncode == 0, proc.stderr
    assert "check: the inductor package's logits within" in proc.stderr
    assert "error_message" not in runs[0] and runs[0]["real_time"] > 0 and runs[0]["model_GB"] > 0
    metrics = {r.split(",")[1]: r.split(",")[3] for r in rows.read_text().splitlines()[1:]}
    assert float(metrics["compilation_time(s)"]) == pytest.approx(runs[0]["compile_s"]) and runs[0]["compile_s"] > 1


def test_builds_spread_over_the_gpus_of_the_plans_model_longest_first():
    spec = importlib.util.spec_from_file_location("build_packages", BUILD)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    names = ["NVIDIA H100 80GB HBM3", "NVIDIA A10", "NVIDIA H100 80GB HBM3"]
    assert builder.gpus_of_model(["3", "5", "7"], names, "NVIDIA H100 80GB HBM3") == ["3", "7"]
    assert builder.gpus_of_model(["0", "1", "2"], names, "NVIDIA H200") == []
    todo = [{"module": "benchmarks/gemv/gemv.py"}, {"module": "benchmarks/decode/model.py"},
            {"module": "benchmarks/layer_norm/layer_norm.py"}]
    assert [e["module"] for e in builder.longest_first(todo)] == [
        "benchmarks/decode/model.py", "benchmarks/gemv/gemv.py", "benchmarks/layer_norm/layer_norm.py"]


def test_a_package_another_builder_is_making_is_waited_for_not_built_twice(tmp_path):
    import fcntl
    import os

    import torch
    settings = ROOT / "inductor" / "settings.json"
    spec = importlib.util.spec_from_file_location("build_packages", BUILD)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    package = tmp_path / "cache" / "LayerNorm_fp32_64x256.pt2"
    package.parent.mkdir()
    entry = {"case": LAYER_NORM, "package": str(package), "module": "benchmarks/layer_norm/layer_norm.py",
             "state": "missing", "dtype": "fp32", "dims": [64, 256], "key": {}}
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"torch": torch.__version__.split("+")[0], "device": "cpu", "device_type": "cpu",
                                     "settings": {"path": str(settings), "hash": builder.fnv1a64(settings.read_bytes())},
                                     "packages": [entry]}))
    lock = os.open(str(package) + ".lock", os.O_CREAT | os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)   # another builder is making this package
    proc = subprocess.Popen([sys.executable, str(BUILD), "--plan", str(plan_file)], stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in proc.stderr:   # the builder says it waits, then waits on the lock
            seen.append(line)
            if "another builder is making it: waiting" in line:
                break
        package.write_bytes(b"made by the other builder")
        fcntl.flock(lock, fcntl.LOCK_UN)
        _, rest = proc.communicate(timeout=60)
        err = "".join(seen) + rest
    finally:
        os.close(lock)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "another builder is making it: waiting" in err and "(built by another builder)" in err
    assert package.read_bytes() == b"made by the other builder" and not (tmp_path / "cache" / (package.name + ".log")).exists()
