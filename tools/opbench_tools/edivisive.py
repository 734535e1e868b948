"""E-divisive means (Matteson and James, "A nonparametric approach for multiple change point analysis of
multivariate data", JASA 2014), the method Hunter and Apache Otava apply to nightly benchmark series,
written here with numpy for one series of at most a few hundred points (O(n^2) memory and time per pass).

For a segment of m points split before point t into X = x[:t] and Y = x[t:], the divergence is
  q(t) = t (m - t) / m * (2 mean|X_i - Y_j| - mean|X_i - X_k| - mean|Y_j - Y_k|)
(the energy distance between the two sides with exponent 1, the means over distinct pairs), large when the
two sides differ in any way, level or shape, and computed for every t at once from prefix sums of the
distance matrix. A candidate is the split with the largest q over all current segments (each side at least
`min_size` points); its significance is a permutation test: the segment's points shuffled `permutations`
times, p = (1 + shuffles whose largest q reaches the candidate's) / (1 + shuffles). A candidate with
p <= alpha becomes a change point and splits its segment; the search repeats until a candidate is not
significant. Shuffling stops early once the candidate can no longer reach alpha (its p is then reported
from the shuffles made). The shuffles come from a seeded generator: the same series gives the same answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ChangePoint:
    index: int        # the first point of the new segment
    q: float          # the divergence at the split
    p_value: float    # permutation p-value


def best_split(x: np.ndarray, min_size: int) -> tuple:
    """(t, q) of the split of `x` with the largest divergence, each side >= min_size (>= 2) points;
    (None, 0.0) when the segment is too short to split."""
    m = len(x)
    if m < 2 * min_size:
        return None, 0.0
    q = _divergences(np.abs(x[:, None] - x[None, :]), min_size)
    at = int(np.argmax(q))
    return min_size + at, float(q[at])


def _divergences(dist: np.ndarray, min_size: int) -> np.ndarray:
    """q(t) for t = min_size .. m - min_size from the m x m distance matrix."""
    m = len(dist)
    prefix = np.zeros((m + 1, m + 1))
    prefix[1:, 1:] = dist.cumsum(0).cumsum(1)
    t = np.arange(min_size, m - min_size + 1)
    nx, ny = t.astype(float), (m - t).astype(float)
    within_x = prefix[t, t]                                   # sum over i, k < t (each pair twice)
    between = prefix[t, m] - within_x                         # i < t <= j
    within_y = prefix[m, m] - prefix[t, m] - prefix[m, t] + within_x
    energy = 2 * between / (nx * ny) - within_x / (nx * (nx - 1)) - within_y / (ny * (ny - 1))
    return nx * ny / m * energy


def permutation_p(x: np.ndarray, q: float, min_size: int, permutations: int, alpha: float, rng) -> float:
    """The permutation p-value of a split of divergence q in `x` (module docstring)."""
    dist = np.abs(x[:, None] - x[None, :])
    reached, done = 0, 0
    give_up = alpha * (permutations + 1)   # this many shuffles at or above q: p > alpha whatever follows
    for done in range(1, permutations + 1):
        order = rng.permutation(len(x))
        if _divergences(dist[np.ix_(order, order)], min_size).max() >= q:
            reached += 1
            if reached + 1 > give_up:
                break
    return (1 + reached) / (1 + done)


def change_points(x, alpha: float = 0.01, permutations: int = 199, min_size: int = 3,
                  seed: int = 0) -> list:
    """The significant change points of the series `x`, in order of position."""
    x = np.asarray(x, dtype=float)
    rng = np.random.default_rng(seed)
    bounds = [0, len(x)]
    found = []
    while True:
        candidates = []
        for start, end in zip(bounds, bounds[1:]):
            t, q = best_split(x[start:end], min_size)
            if t is not None:
                candidates.append((q, start, end, t))
        if not candidates:
            break
        q, start, end, t = max(candidates)
        p = permutation_p(x[start:end], q, min_size, permutations, alpha, rng)
        if p > alpha:
            break
        found.append(ChangePoint(start + t, q, p))
        bounds = sorted(bounds + [start + t])
    return sorted(found, key=lambda c: c.index)


def step_sizes(x, points: list) -> list:
    """(median before, median after) for each change point: the medians of the segments it separates."""
    x = np.asarray(x, dtype=float)
    edges = [0] + [c.index for c in points] + [len(x)]
    return [(float(np.median(x[edges[i]:edges[i + 1]])), float(np.median(x[edges[i + 1]:edges[i + 2]])))
            for i in range(len(points))]
