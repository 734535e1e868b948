"""docs/measured.md is generated from records/ by scripts/make_measured_doc.py: regenerating it gives the
committed file, an edited record without regenerating fails the check, and a record without its header
is refused by name. Also the rules of records/: no source code, at most 150 files."""
import json
import shutil
import subprocess
import sys

import pytest

from bench_ops_bin import ROOT

SCRIPT = ROOT / "scripts" / "make_measured_doc.py"


def generate(root, *args):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def tree(tmp_path):
    """A copy of records/ and docs/measured.md to edit."""
    shutil.copytree(ROOT / "records", tmp_path / "records")
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "measured.md", tmp_path / "docs" / "measured.md")
    return tmp_path


def test_regenerating_gives_the_committed_page():
    proc = generate(ROOT, "--stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (ROOT / "docs" / "measured.md").read_text(), \
        "docs/measured.md is stale: run python3 scripts/make_measured_doc.py"
    assert generate(ROOT, "--check").returncode == 0


def test_the_page_holds_every_record_and_its_tables():
    page = (ROOT / "docs" / "measured.md").read_text()
    readmes = sorted((ROOT / "records").glob("*/*/README.md"))
    assert len(readmes) >= 10
    for readme in readmes:
        assert f"records/{readme.parent.parent.name}/{readme.parent.name}/" in page
    assert "| case | own us | ATen us | inductor us |" in page        # vs_inductor, computed from the rounds
    assert "| experiment | dtype | backend | metric |" in page          # the sweep's rows


@pytest.mark.parametrize("edit", ["csv", "json", "prose"])
def test_an_edited_record_fails_the_check(tree, edit):
    assert generate(tree, "--check").returncode == 0
    record = tree / "records" / "NVIDIA_H200" / "sweep"
    if edit == "csv":
        path = record / "gpt_fast_benchmark.csv"
        path.write_text(path.read_text().replace("meets target", "below target", 1))
    elif edit == "json":
        path = record / "bench_ops.json"
        path.write_text(path.read_text() + "\n")
    else:
        path = record / "README.md"
        path.write_text(path.read_text() + "\nOne more sentence.\n")
    proc = generate(tree, "--check")
    assert proc.returncode == 1
    assert "run python3 scripts/make_measured_doc.py" in proc.stderr
    assert generate(tree).returncode == 0 and generate(tree, "--check").returncode == 0


def test_a_record_without_its_header_is_refused(tree):
    readme = tree / "records" / "NVIDIA_H200" / "sweep" / "README.md"
    readme.write_text("\n".join(line for line in readme.read_text().splitlines() if not line.startswith("- sha:")))
    proc = generate(tree, "--stdout")
    assert proc.returncode == 2
    assert "records/NVIDIA_H200/sweep/README.md" in proc.stderr and "- sha:" in proc.stderr


def test_records_hold_data_not_code():
    files = [p for p in (ROOT / "records").rglob("*") if p.is_file()]
    assert len(files) <= 150
    code = [p for p in files if p.suffix in {".cu", ".cuh", ".cpp", ".h", ".py", ".patch", ".diff", ".sh"}]
    assert code == []


def test_a_self_test_record_with_several_slowdowns_gets_a_row_each(tree):
    # opbench-gate-selftest writes figures per injected slowdown: a row each.
    folder = tree / "records" / "NVIDIA_H200" / "gate_selftest"
    for old in folder.glob("*.json"):
        old.unlink()
    case = {"aa_rounds": 20, "aa_slower": 0, "aa_faster": 0, "smallest_reliable_slowdown_pct": 1.4,
            "slowdowns": {"2": {"caught": 19, "rounds": 20, "changes_pct": [2.1] * 20},
                          "5": {"caught": 20, "rounds": 20, "changes_pct": [5.0] * 20}}}
    (folder / "part1.json").write_text(json.dumps({"cases": {"X/bf16/1/cuda": case}}))
    # A second part (another device call) is added to the first: one row per case and slowdown.
    case2 = dict(case, aa_rounds=3, aa_slower=1, smallest_reliable_slowdown_pct=1.7,
                 slowdowns={"2": {"caught": 3, "rounds": 3, "changes_pct": [2.1] * 3},
                            "5": {"caught": 3, "rounds": 3, "changes_pct": [5.0] * 3}})
    (folder / "part2.json").write_text(json.dumps({"cases": {"X/bf16/1/cuda": case2}}))
    proc = generate(tree, "--stdout")
    assert proc.returncode == 0, proc.stderr
    assert "| part1, part2 | X/bf16/1/cuda | 1 of 23 | 22 of 23 at 2% | +2.1% | 1.7% |" in proc.stdout
    assert "| part1, part2 | X/bf16/1/cuda | 1 of 23 | 23 of 23 at 5% | +5.0% | 1.7% |" in proc.stdout
