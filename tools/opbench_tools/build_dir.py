"""Where the built binaries (bench_ops, bench_instr) are, for the tools that run them.

The first of: the tool's --build-dir option, $OPBENCH_BUILD_DIR, the build/ folder of the checkout the
package runs from (an editable install, `pip install -e tools`, or PYTHONPATH=tools), ./build. A copy
installed into site-packages (`pip install ./tools`) has no checkout: there the option, the variable or
the current folder says where the build is.
"""
from __future__ import annotations

import os
from pathlib import Path

VARIABLE = "OPBENCH_BUILD_DIR"


def checkout() -> Path | None:
    """The repository this package runs from, or None when it runs from an installed copy."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "tools" / "pyproject.toml").is_file() and (root / "CMakeLists.txt").is_file() else None


def build_dir(option: str | None = None) -> tuple[Path, str]:
    """(the build folder, what chose it: --build-dir, $OPBENCH_BUILD_DIR, the checkout or the current folder)."""
    if option:
        return Path(option), "--build-dir"
    if os.environ.get(VARIABLE):
        return Path(os.environ[VARIABLE]), f"${VARIABLE}"
    root = checkout()
    if root is not None:
        return root / "build", f"the checkout {root}"
    return Path("build"), "the current folder"


class MissingBinary(Exception):
    """The binary is not where the build folder says: the message names the places tried and what to do."""


def binary(name: str, option: str | None = None) -> Path:
    """The built `name` (absolute), or MissingBinary naming where it looked and how to point elsewhere."""
    folder, source = build_dir(option)
    path = (folder / name).resolve()
    if not os.access(path, os.X_OK):
        raise MissingBinary(f"{path} not found (build folder from {source}): build it (scripts/build.sh), or "
                            f"name the build folder with --build-dir DIR or ${VARIABLE}")
    return path
