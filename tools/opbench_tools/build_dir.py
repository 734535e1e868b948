"""Where the built binaries (bench_ops, bench_instr) are, for the tools that run them.

The tool's --build-dir option, else $OPBENCH_BUILD_DIR (either one, when given, is the only place
looked at); else the first of these that holds the binary: the build/ folder of the checkout the package
runs from (an editable install, `pip install -e tools`, or PYTHONPATH=tools), the build/ folder of the
checkout around the current folder, ./build. A copy installed into site-packages (`pip install ./tools`)
has no checkout of its own and never looks beside itself: there the option, the variable, or the
checkout you run it in says where the build is. A missing binary's message names every place tried.
"""
from __future__ import annotations

import os
from pathlib import Path

VARIABLE = "OPBENCH_BUILD_DIR"


def is_checkout(root: Path) -> bool:
    return (root / "tools" / "pyproject.toml").is_file() and (root / "CMakeLists.txt").is_file()


def checkout() -> Path | None:
    """The repository this package runs from, or None when it runs from an installed copy."""
    root = Path(__file__).resolve().parents[2]
    return root if is_checkout(root) else None


def enclosing_checkout(start: Path | None = None) -> Path | None:
    """The opbench checkout that holds the current folder (or `start`), if any."""
    here = (start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), None)


def candidates(option: str | None = None) -> list:
    """[(build folder, what chose it)] in the order they are tried."""
    if option:
        return [(Path(option), "--build-dir")]
    if os.environ.get(VARIABLE):
        return [(Path(os.environ[VARIABLE]), f"${VARIABLE}")]
    found = []
    for root, source in ((checkout(), "the package's checkout"), (enclosing_checkout(), "the current checkout")):
        if root is not None and all(folder != root / "build" for folder, _ in found):
            found.append((root / "build", f"{source} {root}"))
    return found + [(Path("build"), "the current folder")]


def build_dir(option: str | None = None) -> tuple[Path, str]:
    """(the first build folder tried, what chose it)."""
    return candidates(option)[0]


class MissingBinary(Exception):
    """The binary is not where the build folder says: the message names the places tried and what to do."""


def binary(name: str, option: str | None = None) -> Path:
    """The built `name` (absolute), or MissingBinary naming where it looked and how to point elsewhere."""
    tried = []
    for folder, source in candidates(option):
        path = (folder / name).resolve()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        tried.append(f"{path} ({source})")
    raise MissingBinary(f"{name} not found; tried {', '.join(tried)}: build it (scripts/build.sh), or name the "
                        f"build folder with --build-dir DIR or ${VARIABLE}")
