"""Loads a script of gpu_checks/ (the GPU-machine checks: scripts, not a package) as a module, by its path."""
import importlib.util
import pathlib
import sys

GPU_CHECKS = pathlib.Path(__file__).resolve().parents[2] / "gpu_checks"


def load_gpu_check(name):
    spec = importlib.util.spec_from_file_location(name, GPU_CHECKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses look the module up while building
    spec.loader.exec_module(module)
    return module
