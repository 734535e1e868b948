"""Where the built bench_ops is: $OPBENCH_BUILD_DIR (set by scripts/test.sh) or ./build."""
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bench_ops() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("OPBENCH_BUILD_DIR", ROOT / "build"))
    path = build / "bench_ops"
    if not path.exists():
        raise FileNotFoundError(f"{path} is not built: run scripts/build.sh first")
    return path


def run_bench_ops(*args, timeout=300):
    """Runs bench_ops with `args`; the CompletedProcess (text stdout and stderr)."""
    import subprocess
    return subprocess.run([str(bench_ops()), *map(str, args)], capture_output=True, text=True, timeout=timeout)
