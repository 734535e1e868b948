"""opbench-compare and opbench-gate on numbers that cannot be measurements, ambiguous policies, and runs that
check nothing: never a PASS or a "100% faster" made of them, and the advice the README gives."""
import json
import subprocess
import sys

COMPARE, GATE = "opbench_tools.compare", "opbench_tools.gate"


def gb_json(path, times_us, name="Gemv/bf16/1024/aten", context=None):
    entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": len(times_us),
                "repetition_index": i, "iterations": 1, "real_time": t, "cpu_time": 1.0, "time_unit": "us"}
               for i, t in enumerate(times_us)]
    text = json.dumps({"context": context or {}, "benchmarks": entries})
    path.write_text(text.replace("NaN", "NaN"))
    return path


def tool(module, *args):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True, timeout=60)


def test_nan_inf_zero_or_negative_times_fail_the_case_instead_of_passing(tmp_path):
    base = gb_json(tmp_path / "base.json", [10.0] * 10, context={"opbench_processes": 10})
    for label, bad in (("nan", float("nan")), ("inf", float("inf")), ("zero", 0.0), ("negative", -5.0)):
        new = gb_json(tmp_path / f"{label}.json", [bad] * 10, context={"opbench_processes": 10})
        gate = tool(GATE, base, new)
        assert gate.returncode == 1, (label, gate.stdout)
        assert "not a positive time" in gate.stdout, label
        compare = tool(COMPARE, base, new)
        assert "faster" not in compare.stdout.lower().split("geomean")[0] or "FAILED" in compare.stdout, label


def test_one_nan_repetition_fails_the_case_rather_than_shrinking_the_count_silently(tmp_path):
    base = gb_json(tmp_path / "base.json", [10.0] * 10, context={"opbench_processes": 10})
    new = gb_json(tmp_path / "new.json", [10.0] * 9 + [float("nan")], context={"opbench_processes": 10})
    gate = tool(GATE, base, new)
    assert gate.returncode == 1 and "repetition 9" in gate.stdout


def test_duplicate_policy_keys_are_refused(tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text('{"max_slowdown_pct": 3, "max_slowdown_pct": 50}')
    base = gb_json(tmp_path / "base.json", [10.0] * 10)
    gate = tool(GATE, "--policy", policy, base, base)
    assert gate.returncode == 2 and "'max_slowdown_pct' appears twice" in gate.stderr


def test_rows_without_targets_say_nothing_was_checked(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("name,metric,target,actual,dtype,device,arch,is_model\ngemv,memory_bandwidth(GB/s),,100,bfloat16,cuda,X,False\n")
    gate = tool(GATE, "--experiments", rows)
    assert gate.returncode == 2
    assert "0 of 1 experiment rows have a target" in gate.stdout and "nothing was checked" in gate.stdout
    assert "PASS" not in gate.stdout


def test_in_process_repetitions_are_flagged_and_the_advice_is_the_readmes(tmp_path):
    base = gb_json(tmp_path / "base.json", [10.0] * 10)                 # one process, 10 repetitions
    new = gb_json(tmp_path / "new.json", [10.1] * 10)
    compare = tool(COMPARE, base, new)
    assert "ran in one process" in compare.stdout + compare.stderr
    assert "opbench-compare --binaries" in compare.stdout + compare.stderr
    few = gb_json(tmp_path / "few.json", [10.0] * 3, context={"opbench_processes": 3})
    gate = tool(GATE, few, few)
    assert "--benchmark_repetitions" not in gate.stdout and "opbench-compare --binaries" in gate.stdout


def test_the_verdict_shows_the_rule_it_applies(tmp_path):
    base = gb_json(tmp_path / "base.json", [10.0 + 0.01 * i for i in range(10)], context={"opbench_processes": 10})
    new = gb_json(tmp_path / "new.json", [13.0 + 0.01 * i for i in range(10)], context={"opbench_processes": 10})
    gate = tool(GATE, base, new)
    assert gate.returncode == 1
    assert "4.5 se =" in gate.stdout and "±2se" not in gate.stdout
