"""The GitHub workflows: ci.yml runs exactly the README test command on a CPU runner; perf.yml builds
base and head on a self-hosted GPU runner, benchmarks both with repetitions, compares, gates, uploads
the results and writes the job summary. Parsed with pyyaml; every run script must pass `bash -n`."""
import os
import re
import shlex
import subprocess

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKFLOWS = os.path.join(ROOT, ".github", "workflows")
TEST_COMMAND = "bash scripts/test.sh"


def load(name):
    with open(os.path.join(WORKFLOWS, name), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    data["on"] = data.get("on", data.get(True))   # YAML 1.1 reads the key `on` as True
    return data


def steps(workflow):
    (job,) = workflow["jobs"].values()
    return job, job["steps"]


def runs(step_list):
    return [s.get("run", "") for s in step_list]


def step_index(step_list, predicate, what):
    hits = [i for i, s in enumerate(step_list) if predicate(s)]
    assert hits, f"no step {what}"
    return hits[0]


def words(step):
    """The step's command line as words (folded `>-` scripts are one line)."""
    text = re.sub(r"\$\{\{[^}]*\}\}", "X", step.get("run", ""))
    return shlex.split(text.replace("\\\n", " "), comments=True)


@pytest.mark.parametrize("name", ["ci.yml", "perf.yml"])
def test_every_run_script_is_valid_bash(name):
    for script in runs(steps(load(name))[1]):
        script = re.sub(r"\$\{\{[^}]*\}\}", "X", script)
        result = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
        assert result.returncode == 0, (name, script, result.stderr)


def test_ci_runs_exactly_the_readme_test_command_on_a_cpu_runner():
    wf = load("ci.yml")
    assert "pull_request" in wf["on"] and "push" in wf["on"]
    job, step_list = steps(wf)
    labels = job["runs-on"] if isinstance(job["runs-on"], list) else [job["runs-on"]]
    assert "self-hosted" not in labels and "gpu" not in labels
    checkout = step_index(step_list, lambda s: s.get("uses", "").startswith("actions/checkout@"), "checking out")
    test = step_index(step_list, lambda s: s.get("run", "").strip() == TEST_COMMAND, f"running {TEST_COMMAND}")
    assert checkout < test
    assert os.path.exists(os.path.join(ROOT, "scripts", "test.sh"))
    ci_run = os.path.join(ROOT, ".ci", "run")
    if os.path.exists(ci_run):
        assert TEST_COMMAND in open(ci_run, encoding="utf-8").read()
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        assert TEST_COMMAND in open(readme, encoding="utf-8").read(), "README must give the same test command"


def flag(w, name):
    assert name in w, (name, w)
    return w[w.index(name) + 1]


def test_perf_builds_benchmarks_compares_gates_uploads_and_summarises():
    wf = load("perf.yml")
    assert "pull_request" in wf["on"]
    job, step_list = steps(wf)
    assert job["runs-on"] == ["self-hosted", "gpu"]
    assert job["env"]["REPETITIONS"] == "10" and job["env"]["OUT"].endswith("/perf-results")
    text = runs(step_list)
    # head checked out, base added as a worktree of the PR's base commit, both built
    head = step_index(step_list, lambda s: s.get("uses", "").startswith("actions/checkout@"), "checking out")
    assert step_list[head]["with"]["path"] == "head" and step_list[head]["with"]["fetch-depth"] == 0
    worktree = step_index(step_list, lambda s: "worktree add" in s.get("run", ""), "adding the base worktree")
    assert "../base" in text[worktree] and "$BASE_REF" in text[worktree] and head < worktree
    assert "pull_request.base.sha" in job["env"]["BASE_REF"]
    builds = {s["working-directory"]: i for i, s in enumerate(step_list) if "/build.sh" in s.get("run", "")}
    assert set(builds) == {"base", "head"} and min(builds.values()) > worktree
    # base and head benchmarked with repetitions (interleaved processes) and compared
    assert job["env"]["PYTHONPATH"].endswith("/head/tools")     # head's tools package, without pip
    assert "bash scripts/build.sh" in text[builds["head"]]
    cmp_i = step_index(step_list, lambda s: "opbench_tools.compare" in s.get("run", ""), "running opbench-compare")
    w = words(step_list[cmp_i])
    assert w[1:3] == ["-m", "opbench_tools.compare"]
    assert w[3:6] == ["--binaries", "base/build/bench_ops", "head/build/bench_ops"]
    assert flag(w, "--repetitions") == "$REPETITIONS" and flag(w, "--filter") == "$FILTER"
    assert flag(w, "--max-repetitions") == "$MAX_REPETITIONS" and job["env"]["MAX_REPETITIONS"] == "30"
    for option in ("--markdown", "--json", "--plot"):
        assert flag(w, option).startswith("$OUT/")
    runs_dir = flag(w, "--out-dir")
    copies = {w[i + 1]: w[i + 2] for i, word in enumerate(w) if word == "cp"}
    base_json, head_json = copies[f"{runs_dir}/old.json"], copies[f"{runs_dir}/new.json"]
    assert cmp_i > max(builds.values())
    # head run once more for the experiment rows (CSV) that the gate checks against targets
    exp_i = step_index(step_list, lambda s: s.get("run", "").startswith("head/build/bench_ops"), "running bench_ops")
    e = words(step_list[exp_i])
    assert "--benchmark_repetitions=$REPETITIONS" in e and "--benchmark_out_format=json" in e
    assert any(a.startswith("--benchmark_out=$OUT/") for a in e)
    head_csv = flag(e, "--output")
    # the gate on exactly those files, after both
    gate_i = step_index(step_list, lambda s: "opbench_tools.gate" in s.get("run", ""), "running opbench-gate")
    g = words(step_list[gate_i])
    assert g[1:3] == ["-m", "opbench_tools.gate"] and g[-2:] == [base_json, head_json]
    assert flag(g, "--policy") == "head/tools/opbench_tools/perf-policy.json" and flag(g, "--experiments") == head_csv
    assert gate_i > max(cmp_i, exp_i)
    for path in ("tools/opbench_tools/compare.py", "tools/opbench_tools/gate.py", "tools/opbench_tools/perf-policy.json",
                 "scripts/build.sh"):
        assert os.path.exists(os.path.join(ROOT, path))
    # summary and upload happen even when the gate fails
    summary = step_index(step_list, lambda s: "GITHUB_STEP_SUMMARY" in s.get("run", ""), "writing the summary")
    assert step_list[summary].get("if") == "always()" and summary > gate_i
    for md in (flag(g, "--markdown"), flag(w, "--markdown")):
        assert md.replace("$OUT", "").strip('"/') in text[summary]
    upload = step_index(step_list, lambda s: s.get("uses", "").startswith("actions/upload-artifact@"), "uploading")
    assert step_list[upload].get("if") == "always()" and upload > gate_i
    paths = step_list[upload]["with"]["path"]
    for ext in ("*.json", "*.csv", "*.png", "*.md"):
        assert f"perf-results/{ext}" in paths
