"""The Qn scale's k-th pairwise distance in O(n) memory (opbench_tools.pairwise) equals a full sort of the
n(n-1)/2 distances on random inputs (ties, huge and tiny magnitudes, distances where x[i] + d rounds), and
the gate's statistics no longer form those distances (issue #38: a 10 MB file took 2.3 GB)."""
import random
import tracemalloc

import pytest

from opbench_tools import pairwise
from opbench_tools.pairwise import kth_pairwise_distance
from opbench_tools.stats import qn_scale


def sorted_distances(x):
    """The oracle: every pairwise distance, sorted (O(n^2): only here)."""
    return sorted(abs(x[i] - x[j]) for i in range(len(x)) for j in range(i + 1, len(x)))


def random_values(rng, kind, n):
    if kind == "normal":
        return [rng.gauss(100, 3) for _ in range(n)]
    if kind == "ties":
        return [float(rng.randint(0, 5)) for _ in range(n)]
    if kind == "magnitudes":
        return [rng.choice([1e-300, 1e300, -3.0, 0.1, 0.3]) * rng.random() for _ in range(n)]
    return [1e15 + rng.random() * 8 for _ in range(n)]   # "rounding": x[i] + d is not exact


@pytest.mark.parametrize("kind", ["normal", "ties", "magnitudes", "rounding"])
@pytest.mark.parametrize("direct_sort_max", [1, 7, 4096])
def test_equals_a_full_sort_on_random_inputs(kind, direct_sort_max, monkeypatch):
    monkeypatch.setattr(pairwise, "DIRECT_SORT_MAX", direct_sort_max)
    monkeypatch.setattr(pairwise, "SAMPLE_SIZE", 64)
    rng = random.Random(f"{kind}{direct_sort_max}")
    for _ in range(25):
        x = random_values(rng, kind, rng.randint(2, 90))
        oracle = sorted_distances(x)
        h = len(x) // 2 + 1
        for k in {1, len(oracle), rng.randint(1, len(oracle)), max(1, h * (h - 1) // 2)}:
            assert kth_pairwise_distance(x, k) == oracle[k - 1], (x, k)


def test_k_out_of_range_is_a_value_error():
    for x, k in (([1.0], 1), ([1.0, 2.0], 0), ([1.0, 2.0, 3.0], 4)):
        with pytest.raises(ValueError):
            kth_pairwise_distance(x, k)


def test_qn_scale_memory_is_linear():
    x = [random.Random(3).gauss(0, 1) + i * 1e-6 for i in range(4000)]
    tracemalloc.start()
    qn_scale(x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4_000_000, f"{peak} bytes for 4000 values: the pairwise distances were formed"

