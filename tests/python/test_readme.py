"""The README's "Common tasks" run as written: every ```bash block of that section, from the repository
root, on this machine (CI: a CPU machine with the project built), each ending with exit status 0."""
import pathlib
import re
import subprocess

import pytest

from bench_ops_bin import ROOT, bench_ops

# The README's blocks run in order (task 4 gates task 3's runs), and task 4's A/A gate times CPU cases.
pytestmark = pytest.mark.serial


def task_blocks():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Common tasks", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


def test_the_readme_has_the_common_tasks():
    assert len(task_blocks()) >= 5


@pytest.mark.parametrize("block", task_blocks(), ids=lambda b: b.splitlines()[0][:60])
def test_readme_task_runs_as_written(block):
    bench_ops()   # the build exists (else a clear error, not a confusing shell failure)
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{block}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
