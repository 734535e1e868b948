"""The k-th smallest pairwise distance |x_i - x_j| (i < j) of n values in O(n) memory and O(n log n)
time per round (a few rounds), for the Qn scale (stats.qn_scale) without forming the n(n-1)/2 distances.

With x sorted, row i holds the distances x[j] - x[i] for j > i: each row grows with j and each column
shrinks with i (floating-point subtraction is monotone, so the computed distances keep that order). A
selection over this sorted matrix keeps, per row, the half-open range [low, high) of columns that may
still hold the answer. Each round draws a sample of the remaining candidates (seeded: the same input
always gives the same rounds), takes two pivots from it that bracket rank k, and for each pivot counts
the distances below it and at it in every row (a binary search per row), keeping the side that holds
rank k, or returning the pivot when rank k is one of the distances equal to it. Once few candidates
remain they are sorted directly. The result is one of the computed distances, the one a full sort of
all of them would pick. Memory: the sorted copy of x and two index arrays, 16 bytes a value.
"""
from __future__ import annotations

import numpy as np

DIRECT_SORT_MAX = 4096   # candidates left when they are sorted directly
CHUNK_ROWS = 1 << 18     # rows searched at a time: bounds the temporaries to a few MB
SAMPLE_SIZE = 4096       # candidates drawn per round to place the two pivots
BRACKET_SD = 3.0         # the pivots sit this many binomial standard deviations around rank k
SEED = 20240611


def kth_pairwise_distance(values, k: int) -> float:
    """The k-th smallest (1-based) of |x_i - x_j| over pairs i < j; ValueError when k is out of range."""

    x = np.array(values, dtype=np.float64)
    x.sort()
    n = len(x)
    if not 1 <= k <= n * (n - 1) // 2:
        raise ValueError(f"k = {k} is outside 1..{n * (n - 1) // 2} for {n} values")
    state = _Candidates(x)
    rng = np.random.default_rng(SEED)
    while state.count() > DIRECT_SORT_MAX:
        for pivot in _pivots(state, k, rng):
            found = state.split(pivot, k)
            if found is not None:
                return found
            if state.count() <= DIRECT_SORT_MAX:
                break
    return state.direct(k)


class _Candidates:
    """Per row i, the columns [low[i], high[i]) that may hold rank k; `below` distances rank under all."""

    def __init__(self, x):
        self.x = x
        index = np.int32 if len(x) < 2**30 else np.int64   # half the memory; lo + hi stays in range
        self.low = np.arange(1, len(x), dtype=index)
        self.high = np.full(len(x) - 1, len(x), dtype=index)
        self.below = 0

    def count(self) -> int:
        return int((self.high - self.low).sum(dtype=np.int64))

    def split(self, pivot: float, k: int):
        """Keeps the side of `pivot` that holds rank k; the pivot itself when rank k equals it."""
        under = self.first_not_below(pivot, strict=True)
        count_under = self.below + int((under - self.low).sum(dtype=np.int64))
        if k <= count_under:
            self.high = under
            return None
        upto = self.first_not_below(pivot, strict=False)
        count_upto = self.below + int((upto - self.low).sum(dtype=np.int64))
        if k <= count_upto:
            return float(pivot)
        self.below, self.low = count_upto, upto
        return None

    def first_not_below(self, pivot: float, strict: bool):
        """Per row, the first column in [low, high) whose distance is not below the pivot (strict: not
        < pivot, else not <= pivot). A search on x[i] + pivot guesses it; rows where the rounding of that
        sum puts the guess off are searched again on the distances themselves."""
        out = np.empty_like(self.low)
        for start in range(0, len(out), CHUNK_ROWS):
            rows = np.arange(start, min(start + CHUNK_ROWS, len(out)))
            out[rows] = self._first_not_below(rows, pivot, strict)
        return out

    def _first_not_below(self, rows, pivot: float, strict: bool):
        x, low, high = self.x, self.low[rows], self.high[rows]
        side = "left" if strict else "right"
        guess = np.clip(np.searchsorted(x, x[rows] + pivot, side=side), low, high)
        inside = (lambda c, r: x[c] - x[r] < pivot) if strict else (lambda c, r: x[c] - x[r] <= pivot)
        last = len(x) - 1   # an index for rows with no candidate; their answer is `low` anyway
        before_ok = (guess == low) | inside(np.clip(guess - 1, 0, last), rows)
        after_ok = (guess == high) | ~inside(np.minimum(guess, last), rows)
        wrong = np.nonzero(~(before_ok & after_ok))[0]
        if len(wrong):
            guess[wrong] = _binary_search(x, rows[wrong], low[wrong], high[wrong], inside)
        return guess

    def sample(self, size: int, rng):
        """`size` candidate distances drawn uniformly (with replacement) from the remaining ones."""
        widths = self.high - self.low
        ends = np.cumsum(widths, dtype=np.int64)
        picks = rng.integers(0, int(ends[-1]), size=size)
        row = np.searchsorted(ends, picks, side="right")
        column = self.low[row] + picks - (ends[row] - widths[row])
        return np.sort(self.x[column] - self.x[row])

    def direct(self, k: int) -> float:
        """Rank k by sorting the remaining candidates."""
        widths = self.high - self.low
        keep = widths > 0
        row_of = np.repeat(np.nonzero(keep)[0], widths[keep])
        starts = np.repeat(self.low[keep] - np.cumsum(widths[keep], dtype=np.int64) + widths[keep], widths[keep])
        columns = starts + np.arange(len(row_of))
        return float(np.sort(self.x[columns] - self.x[row_of])[k - self.below - 1])


def _pivots(state: _Candidates, k: int, rng) -> list:
    """Two sampled candidates that bracket rank k among the remaining ones, the nearer side first."""
    sample = state.sample(SAMPLE_SIZE, rng)
    share = (k - state.below) / state.count()
    spread = BRACKET_SD * (SAMPLE_SIZE * share * (1 - share)) ** 0.5 + 1
    at = share * SAMPLE_SIZE
    lo = int(min(max(at - spread, 0), SAMPLE_SIZE - 1))
    hi = int(min(max(at + spread, 0), SAMPLE_SIZE - 1))
    return [sample[lo], sample[hi]] if share < 0.5 else [sample[hi], sample[lo]]


def _binary_search(x, rows, low, high, inside):
    """Per row of `rows`, the first column in [low, high) where inside(column, row) is false."""
    lo, hi = low.copy(), high.copy()
    active = np.nonzero(lo < hi)[0]
    while len(active):
        mid = (lo[active] + hi[active]) // 2
        yes = inside(mid, rows[active])
        lo[active] = np.where(yes, mid + 1, lo[active])
        hi[active] = np.where(yes, hi[active], mid)
        active = active[lo[active] < hi[active]]
    return lo
