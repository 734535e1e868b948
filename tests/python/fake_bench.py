"""The stand-in for bench_ops (data/fakes/fake_bench_ops.py) and the PATH that starts it quickly."""
import os
import sys

FAKE_BENCH = os.path.join(os.path.dirname(__file__), "data", "fakes", "fake_bench_ops.py")


def path_with_this_python() -> str:
    """PATH with this interpreter's folder first, so the fake's `#!/usr/bin/env python3` starts this python
    and not a wrapper found earlier on PATH: a pyenv shim took 0.15 s a process, and a self-test starts
    hundreds (test_gate_selftest_fake.py 49 s against 22)."""
    return os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
