"""The tools package (tools/pyproject.toml): installed into a fresh venv it gives working console scripts
(no network: its wheel is built from ./tools with this venv's setuptools and installed without its
dependencies, which the scripts' --help does not need; a real comparison then runs with this venv's
scipy on the path); a python without scipy gets one line saying what to do, not a traceback; installed
into site-packages, the scripts look for the binaries in the build folder, never beside themselves.
The tests themselves run against the checkout's package (scripts/setup.sh installs it editable), and
nothing in the package, the GPU checks or the tests edits sys.path."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import opbench_tools
from bench_ops_bin import ROOT
from opbench_tools import build_dir

SCRIPTS = ["opbench-compare", "opbench-gate", "opbench-gate-selftest", "opbench-changepoints", "opbench-trace",
           "opbench-instr", "opbench-make-targets", "opbench-plot", "opbench-shard"]
FAKE_BENCH_INSTR = """#!/bin/sh
echo '[{"group": "fake", "label": "from_%s", "variants": ["fwd"], "iters": 1, "stmt": "x"}]'
"""


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """A new venv with only the tools' wheel, built here from ./tools (setuptools + wheel of this venv)."""
    work = tmp_path_factory.mktemp("fresh")
    source = work / "tools"   # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT / "tools", source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "-w", str(work / "dist"), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    wheel = next((work / "dist").glob("opbench_tools-*.whl"))
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    return venv


@pytest.fixture(scope="module")
def aa_runs(tmp_path_factory):
    """Two Google Benchmark JSON runs of the same three cases, 10 processes each, the same times."""
    folder = tmp_path_factory.mktemp("aa")
    times = [100.0 + (7 * i % 10) * 0.1 for i in range(10)]
    paths = []
    for side, order in (("old", times), ("new", times[::-1])):
        entries = [{"name": f"Gemv/bf16/{dim}/aten", "run_name": f"Gemv/bf16/{dim}/aten", "run_type": "iteration",
                    "repetitions": 10, "repetition_index": i, "iterations": 1, "real_time": t * dim / 1024,
                    "cpu_time": 1.0, "time_unit": "us"}
                   for dim in (1024, 2048, 4096) for i, t in enumerate(order)]
        path = folder / f"{side}.json"
        path.write_text(json.dumps({"context": {"opbench_processes": 10}, "benchmarks": entries}))
        paths.append(str(path))
    return paths


def fake_build(folder, label):
    """A build folder whose bench_instr lists one definition named after `label`."""
    folder.mkdir(parents=True)
    exe = folder / "bench_instr"
    exe.write_text(FAKE_BENCH_INSTR % label)
    exe.chmod(0o755)
    return folder


@pytest.mark.parametrize("script", SCRIPTS)
def test_console_script_runs(fresh_venv, script):
    proc = subprocess.run([str(fresh_venv / "bin" / script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout and f"usage: {script}" in proc.stdout


def test_installed_compare_and_gate_work_with_their_dependencies(fresh_venv, aa_runs):
    deps = {os.path.dirname(os.path.dirname(pytest.importorskip(m).__file__)) for m in ("numpy", "scipy")}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sorted(deps)))   # this python's numpy and scipy
    compare = subprocess.run([str(fresh_venv / "bin" / "opbench-compare"), *aa_runs], capture_output=True,
                             text=True, timeout=120, env=env)
    assert compare.returncode == 0, compare.stderr
    assert "geomean" in compare.stdout
    gate = subprocess.run([str(fresh_venv / "bin" / "opbench-gate"), *aa_runs], capture_output=True, text=True,
                          timeout=120, env=env)
    assert gate.returncode == 0 and "PASS" in gate.stdout, gate.stdout + gate.stderr   # the policy is packaged
    assert "site-packages" in gate.stdout and "perf-policy.json" in gate.stdout


def test_without_scipy_one_line_says_what_to_do(fresh_venv, aa_runs):
    proc = subprocess.run([str(fresh_venv / "bin" / "opbench-compare"), *aa_runs], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "need scipy" in proc.stderr and "pip install ./tools" in proc.stderr


def test_installed_scripts_find_the_binaries_in_the_build_folder(fresh_venv, tmp_path):
    instr = str(fresh_venv / "bin" / "opbench-instr")
    env = {k: v for k, v in os.environ.items() if k != build_dir.VARIABLE}
    fake_build(tmp_path / "here" / "build", "cwd")
    fake_build(tmp_path / "env_build", "env")
    fake_build(tmp_path / "option_build", "option")

    def listed(*args, variable=None, cwd=tmp_path / "here"):
        run_env = dict(env, **({build_dir.VARIABLE: str(variable)} if variable else {}))
        proc = subprocess.run([instr, "list", *args], capture_output=True, text=True, timeout=60, env=run_env, cwd=cwd)
        return proc.returncode, proc.stdout + proc.stderr

    code, out = listed()                                                              # ./build
    assert code == 0 and "fake/from_cwd" in out
    code, out = listed(variable=tmp_path / "env_build")                               # $OPBENCH_BUILD_DIR
    assert code == 0 and "fake/from_env" in out
    code, out = listed("--build-dir", str(tmp_path / "option_build"), variable=tmp_path / "env_build")
    assert code == 0 and "fake/from_option" in out                                   # --build-dir first
    code, out = listed(cwd=tmp_path)                                                  # no build anywhere
    assert code == 2 and "Traceback" not in out and "site-packages" not in out
    assert "tried" in out and str(tmp_path / "build" / "bench_instr") in out and len(out.splitlines()) == 1
    assert "--build-dir" in out and build_dir.VARIABLE in out
    repo = tmp_path / "repo"                               # run inside a checkout: its build/ is found
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "pyproject.toml").write_text("")
    (repo / "CMakeLists.txt").write_text("")
    (repo / "docs").mkdir()
    fake_build(repo / "build", "checkout")
    code, out = listed(cwd=repo / "docs")
    assert code == 0 and "fake/from_checkout" in out


def test_the_checkouts_package_is_the_one_tested_and_finds_the_checkouts_build(monkeypatch, tmp_path):
    assert pathlib.Path(opbench_tools.__file__).resolve().parent == ROOT / "tools" / "opbench_tools"
    monkeypatch.delenv(build_dir.VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    assert build_dir.build_dir()[0] == ROOT / "build"
    if sys.prefix != sys.base_prefix:   # a venv (CI, users): scripts/setup.sh put the console scripts in it
        for script in SCRIPTS:
            assert (pathlib.Path(sys.executable).parent / script).exists(), script


def test_nothing_edits_sys_path():
    edit = "sys.path." + "insert", "sys.path." + "append"
    files = [p for folder in ("tools", "gpu_checks", "tests/python") for p in (ROOT / folder).rglob("*.py")]
    assert len(files) > 30
    offenders = [str(p.relative_to(ROOT)) for p in files if any(e in p.read_text() for e in edit)]
    assert offenders == []
