"""The gate's self-test (opbench-gate-selftest) on a stand-in for bench_ops (tests/python/data/fakes/
fake_bench_ops.py: seeded lognormal times, so no timing here and no need to run alone): the rates it
prints, the smallest slowdown caught, sequential repetitions, and which slowdowns it must catch."""
import json
import os
import subprocess
import sys

from fake_bench import FAKE_BENCH as FAKE, path_with_this_python


def fake_selftest(tmp_path, policy, *extra, seed="1", gpus_shown=None):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    out, log = tmp_path / "selftest.json", tmp_path / "filters.log"
    log.touch()
    env = dict(os.environ, FAKE_BENCH_SEED=seed, FAKE_BENCH_LOG=str(log), PATH=path_with_this_python())
    if gpus_shown is not None:   # the GPUs the host shows (CI has none)
        env["CUDA_VISIBLE_DEVICES"] = gpus_shown
    proc = subprocess.run([sys.executable, "-m", "opbench_tools.gate_selftest", "--binary", FAKE, "--filter", ".",
                           "--policy", str(path), "--json", str(out), "--out-dir", str(tmp_path / "runs"), *extra],
                          capture_output=True, text=True, timeout=300, env=env)
    return proc, (json.loads(out.read_text()) if out.exists() else None), log.read_text().splitlines()


def test_selftest_rates_smallest_caught_and_sequential_repetitions(tmp_path):
    # Calm (0.2% noise) resolves 1.2% at 5 processes a side and is caught at 2%; Noisy (2% noise, a 6% rule)
    # is NOISY at 5 and gets processes added, for it alone, until it resolves; 10% is caught, 2% is not
    # (below its threshold, so not required).
    policy = {"min_repetitions": 5, "max_slowdown_pct": 1.2, "rules": [{"pattern": "^Noisy/", "max_slowdown_pct": 6}]}
    proc, result, filters = fake_selftest(tmp_path, policy, "--rounds", "3", "--repetitions", "5",
                                          "--max-repetitions", "17", "--batch", "4", "--slowdown", "2",
                                          "--slowdown", "10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "false alarms: the gate failed 0 of 3 A/A rounds = 0% (95% upper bound 63.2%)" in proc.stdout
    assert "detection at 10%: the gate failed 3 of 3 rounds = 100%" in proc.stdout
    calm, noisy = result["cases"]["Calm/bf16/64/aten"], result["cases"]["Noisy/bf16/64/aten"]
    assert calm["slowdowns"]["2"]["caught"] == 3 and calm["smallest_caught_pct"] == 2
    assert noisy["slowdowns"]["2"]["caught"] == 0 and noisy["smallest_caught_pct"] == 10
    assert calm["repetitions"] == [5, 5, 5] and all(9 <= n <= 17 for n in noisy["repetitions"])
    added = [f for f in filters if f != "."]
    assert added and set(added) == {"^(Noisy/bf16/64/aten)(/.*)?$"}   # only the unresolved case reran
    line = next(l for l in proc.stdout.splitlines() if l.startswith("Calm/"))
    assert line.split()[1:11] == ["0", "of", "3", "3", "of", "3", "3", "of", "3", "2%"], line


def test_selftest_requires_only_slowdowns_above_the_threshold(tmp_path):
    # Without a rule, 5 processes a side leave Noisy (2% noise) unable to resolve 1.5%: its 5% slowdown is
    # not caught (NOISY), and since 5% is above its threshold the self-test fails.
    proc, result, _ = fake_selftest(tmp_path, {"min_repetitions": 5, "max_slowdown_pct": 1.5}, "--rounds", "2",
                                    "--repetitions", "5", "--slowdown", "5")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert result["cases"]["Noisy/bf16/64/aten"]["smallest_caught_pct"] is None
    assert result["aa_rounds_inconclusive"] == 2 and "2 ended INCONCLUSIVE" in proc.stdout


def test_rounds_run_side_by_side_one_gpu_each_and_every_group_of_a_round_on_its_gpu(tmp_path):
    policy = {"min_repetitions": 5, "max_slowdown_pct": 1.2, "rules": [{"pattern": "^Noisy/", "max_slowdown_pct": 20}]}
    proc, result, _ = fake_selftest(tmp_path, policy, "--rounds", "3", "--repetitions", "5", "--slowdown", "10",
                                    "--gpus", "0,1", gpus_shown="0,1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["rounds"] == 3 and result["gpus"] == ["0", "1"]
    assert result["cases"]["Calm/bf16/64/aten"]["slowdowns"]["10"]["caught"] == 3
    assert "rounds side by side on GPUs 0,1" in proc.stdout
    gpu_of_round = {}
    for gpu in ("0", "1"):
        for f in (tmp_path / "runs" / f"gpu{gpu}").glob("*-*.json"):   # one process's JSON
            seen = json.loads(f.read_text())["context"]["fake_cuda_visible_devices"]
            assert seen == gpu, f
            round_index = f.name.split("-")[0].rsplit("r", 1)[-1].lstrip("BC")
            assert gpu_of_round.setdefault(round_index, gpu) == gpu   # a round's groups share its GPU
    assert sorted(gpu_of_round) == ["0", "1", "2"] and set(gpu_of_round.values()) == {"0", "1"}


def test_gpus_not_shown_by_the_host_are_refused(tmp_path):
    for gpus, says in (("2", "2 not among this host's GPUs (0,1)"), ("0,0", "a GPU named twice")):
        proc, _, _ = fake_selftest(tmp_path, {"min_repetitions": 3}, "--rounds", "1", "--repetitions", "3",
                                   "--gpus", gpus, gpus_shown="0,1")
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr



def combine(*args):
    return subprocess.run([sys.executable, "-m", "opbench_tools.gate_selftest", "--combine", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_combine_adds_up_runs_judges_the_sum_as_one_and_refuses_other_experiments(tmp_path):
    # Two runs of the same experiment (2 rounds and 1): --combine gives the 3 rounds of one run of 3 -- the
    # counts added, the per-round figures joined, the smallest slowdowns judged again -- and its exit status.
    policy = {"min_repetitions": 5, "max_slowdown_pct": 1.2, "rules": [{"pattern": "^Noisy/", "max_slowdown_pct": 20}]}
    parts = []
    for rounds, seed in (("2", "3"), ("1", "4")):
        folder = tmp_path / f"part{rounds}"
        folder.mkdir()
        proc, result, _ = fake_selftest(folder, policy, "--rounds", rounds, "--repetitions", "5", "--slowdown", "10",
                                        seed=seed)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        parts.append((folder / "selftest.json", result))
    out = tmp_path / "sum.json"
    proc = combine(parts[0][0], parts[1][0], "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total = json.loads(out.read_text())
    assert total["rounds"] == 3 and total["combined_from"] == [[str(parts[0][0]), 2], [str(parts[1][0]), 1]]
    assert "combined from 2 runs" in proc.stdout and "the gate failed 0 of 3 A/A rounds" in proc.stdout
    for name, case in total["cases"].items():
        ones = [p[1]["cases"][name] for p in parts]
        assert case["aa_changes_pct"] == ones[0]["aa_changes_pct"] + ones[1]["aa_changes_pct"]
        assert case["slowdowns"]["10"]["caught"] == sum(c["slowdowns"]["10"]["caught"] for c in ones)
        assert len(case["aa_needed_pct"]) == 3 and case["smallest_reliable_slowdown_pct"] is not None
    # A part missing a catch turns the sum's verdict: Calm caught in 2 of 3 rounds at 10% is below 95%.
    doctored = json.loads(parts[1][0].read_text())
    doctored["cases"]["Calm/bf16/64/aten"]["slowdowns"]["10"]["caught"] = 0
    missed = tmp_path / "missed.json"
    missed.write_text(json.dumps(doctored))
    assert combine(parts[0][0], missed).returncode == 1
    # Parts of different experiments, and files that are no self-test's, are refused (exit 2, named).
    doctored["slowdowns_pct"] = [5.0]
    other_slowdown = tmp_path / "other_slowdown.json"
    other_slowdown.write_text(json.dumps(doctored))
    proc = combine(parts[0][0], other_slowdown)
    assert proc.returncode == 2 and "has slowdowns_pct [5.0]" in proc.stderr and "not one experiment" in proc.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"benchmarks": []}))
    proc = combine(parts[0][0], other)
    assert proc.returncode == 2 and "not the --json of a gate self-test" in proc.stderr, proc.stderr


def test_a_round_starts_only_while_the_slowest_finished_one_would_end_in_the_budget():
    # Device calls are limited to minutes: a round cut short by --time-budget is device time lost.
    from opbench_tools.gate_selftest import round_fits
    assert round_fits(None, [500.0])                          # no budget
    assert round_fits(0.5, []) and not round_fits(0.0, [])    # before any round finished: while time is left
    assert round_fits(251.0, [100.0, 250.0]) and not round_fits(249.0, [100.0, 250.0])
