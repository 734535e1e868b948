"""The tools package (tools/pyproject.toml) installed into a fresh venv gives working console scripts (no
network: its wheel is built from ./tools with this venv's setuptools and installed without its
dependencies, which the scripts' --help does not need; a real comparison then runs with this venv's
scipy on the path). Also: a python without
scipy gets one line saying what to do, not a traceback."""
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from bench_ops_bin import ROOT

SCRIPTS = ["opbench-compare", "opbench-gate", "opbench-gate-selftest", "opbench-trace", "opbench-instr", "opbench-make-targets",
           "opbench-plot", "opbench-shard"]
H200_AA = ROOT / "records" / "NVIDIA_H200" / "compare"


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


@pytest.mark.parametrize("script", SCRIPTS)
def test_console_script_runs(fresh_venv, script):
    proc = subprocess.run([str(fresh_venv / "bin" / script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout


def test_installed_compare_and_gate_work_with_their_dependencies(fresh_venv):
    env = dict(os.environ, PYTHONPATH=sysconfig.get_paths()["purelib"])   # this venv's numpy/scipy
    compare = subprocess.run([str(fresh_venv / "bin" / "opbench-compare"), str(H200_AA / "aa_old.json"),
                              str(H200_AA / "aa_new.json")], capture_output=True, text=True, timeout=120, env=env)
    assert compare.returncode == 0, compare.stderr
    assert "geomean" in compare.stdout
    gate = subprocess.run([str(fresh_venv / "bin" / "opbench-gate"), str(H200_AA / "aa_old.json"),
                           str(H200_AA / "aa_new.json")], capture_output=True, text=True, timeout=120, env=env)
    assert gate.returncode == 0 and "PASS" in gate.stdout      # the default policy is packaged


def test_without_scipy_one_line_says_what_to_do(fresh_venv):
    proc = subprocess.run([str(fresh_venv / "bin" / "opbench-compare"), str(H200_AA / "aa_old.json"),
                           str(H200_AA / "aa_new.json")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "need scipy" in proc.stderr and "pip install ./tools" in proc.stderr
