"""gpu_checks/torch_compile_timings.py's account of inductor's tuning cache: which results a compilation
wrote, and whether a rewritten one was tuned over the same candidates (the cached choice not taken) or
over others (the kernel's heuristics differ). The cache is a folder of *.best_config files written here.
And why the references compile in their own process: the worker pool's pickle drops the mark that lets a
cached coordinate-descent choice be used as it is."""
import json
import pickle

import pytest

from load_gpu_check import GPU_CHECKS, load_gpu_check


@pytest.fixture
def timings(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(GPU_CHECKS))   # the script imports its neighbour eager_timings
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    return load_gpu_check("torch_compile_timings")


def best_config(path, configs_hash, xblock):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"XBLOCK": xblock, "num_warps": 4, "configs_hash": configs_hash,
                                "found_by_coordesc": True}))


def test_rewrites_are_told_apart_by_their_candidates(timings, tmp_path):
    best_config(tmp_path / "ab" / "kept.best_config", "h1", 2)
    best_config(tmp_path / "ab" / "same.best_config", "h2", 2)
    best_config(tmp_path / "cd" / "other.best_config", "h3", 1)
    before = timings.tuning_results()
    assert len(before) == 3 and timings.tuned_since(before) == 0
    best_config(tmp_path / "ab" / "same.best_config", "h2", 1)       # tuned again over the same candidates
    best_config(tmp_path / "cd" / "other.best_config", "h4", 1)      # over other candidates
    best_config(tmp_path / "ef" / "new.best_config", "h5", 8)        # a kernel the cache did not have
    assert timings.retuned_since(before) == {"new": 1, "same_candidates": 1, "other_candidates": 1}
    assert timings.tuned_since(before) == 3


def test_the_references_compile_in_process_where_a_cached_choice_keeps_its_mark(timings):
    triton = pytest.importorskip("triton")
    import torch._inductor.config as inductor_config
    from torch._inductor.async_compile import get_compile_threads
    choice = triton.Config({"XBLOCK": 2}, num_warps=4, num_stages=1)
    choice.found_by_coordesc = True   # how inductor marks a choice read from its cache
    # What a kernel compiled in a worker process brings back: the mark is gone, so inductor would tune again.
    assert not getattr(pickle.loads(pickle.dumps(choice)), "found_by_coordesc", False)
    settings = timings.package_kernel_sources()
    assert settings["triton.store_cubin"] is True
    with inductor_config.patch(settings):
        assert get_compile_threads() == 1   # no worker pool: every kernel compiled here, nothing pickled
