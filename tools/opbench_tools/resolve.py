"""Whether a compared case resolves its threshold, and how many repetitions would make it resolve.

A case is unresolved when the data cannot tell whether it regressed by more than its threshold T:
  NOISY            the half-width of the gate's interval, NOISE_Z standard errors of the change, exceeds T;
  UNSURE, slower   a slowdown above T and above NOISE_Z se that the rank test does not confirm.
An UNSURE case that got faster is resolved: its change plus NOISE_Z se is below zero, so it did not
regress by T. Every other verdict (SAME, SLOWER, FASTER, a deterministic metric) is resolved.

Repetitions per side that would resolve an unresolved case, both sides alike, from what was observed:
  NOISY   the n at which NOISE_Z * MEDIAN_SE * spread * sqrt(2 / n) <= T, i.e.
          n = ceil(2 * (NOISE_Z * MEDIAN_SE * spread / T) ** 2), with the case's pooled spread; paired,
          the spread is that of one pair's log ratio and se = MEDIAN_SE * spread / sqrt(n), so
          n = ceil((NOISE_Z * MEDIAN_SE * spread / T) ** 2);
  UNSURE  the n at which the Mann-Whitney test of the observed effect reaches p < alpha. The effect is
          theta = U / (n_old * n_new), the share of (old, new) pairs in which new is slower; at n a
          side the test's z is |theta - 1/2| * sqrt(12 n^2 / (2n + 1)) (no ties), so n is the
          smallest whole number with n^2 >= c (2n + 1), c = (z_(1 - alpha/2) / |theta - 1/2|)^2 / 12.
          Paired, the sign test's z, (2 s - 1) sqrt(n) with s the share of pairs in which new is slower,
          gives n = (z_(1 - alpha/2) / (2 s - 1))^2: an upper bound for the signed-rank test used.
Either figure assumes the spread (or the effect) stays what it was; it is an estimate, not a promise.
"""
from __future__ import annotations

import math

from opbench_tools.stats import MEDIAN_SE, NOISE_Z, CaseResult, scipy_stats

MAX_SUGGESTED = 10_000   # repetitions a side beyond which the estimate says "more than" instead


def unresolved(c: CaseResult) -> bool:
    """True when the case cannot tell whether it regressed by more than its threshold."""
    return c.verdict == "NOISY" or (c.verdict == "UNSURE" and (c.change or 0) > 0)


def repetitions_to_resolve(c: CaseResult, alpha: float) -> int | None:
    """Repetitions a side that would resolve the unresolved case `c` (module docstring); None when no
    number would (a threshold of 0, or no effect at all for the rank test to find)."""
    paired = c.test == "wilcoxon"
    if c.verdict == "NOISY":
        return _for_noise(c.spread, c.threshold, 1 if paired else 2)
    return _for_sign_test(c, alpha) if paired else _for_rank_test(c, alpha)


def _for_noise(spread: float | None, threshold: float, sides: int) -> int | None:
    if spread is None or threshold <= 0:
        return None
    return max(2, math.ceil(sides * (NOISE_Z * MEDIAN_SE * spread / threshold) ** 2))


def _for_sign_test(c: CaseResult, alpha: float) -> int | None:
    slower = sum(n > o for o, n in zip(c.old.values, c.new.values)) / len(c.old.values)
    if slower == 0.5:
        return None
    z = float(scipy_stats().norm.ppf(1 - alpha / 2))
    return max(6, math.ceil((z / (2 * slower - 1)) ** 2))


def _for_rank_test(c: CaseResult, alpha: float) -> int | None:
    if c.old is None or c.new is None or len(c.old.values) < 2 or len(c.new.values) < 2:
        return None
    u = scipy_stats().mannwhitneyu(c.new.values, c.old.values, alternative="two-sided").statistic
    effect = abs(float(u) / (len(c.old.values) * len(c.new.values)) - 0.5)
    if effect == 0:
        return None
    z = float(scipy_stats().norm.ppf(1 - alpha / 2))
    k = (z / effect) ** 2 / 12
    return max(4, math.ceil(k + math.sqrt(k * k + k)))


def advice(c: CaseResult, alpha: float) -> str:
    """'about N repetitions a side (K more)', or why no number is given."""
    n = repetitions_to_resolve(c, alpha)
    have = min(c.old.n, c.new.n) if c.old and c.new else 0
    if n is None:
        return "no number of repetitions would: give the case a larger threshold (a policy rule)"
    if n > MAX_SUGGESTED:
        return f"more than {MAX_SUGGESTED} repetitions a side: give the case a larger threshold (a policy rule)"
    return f"about {n} repetitions a side would resolve it ({max(n - have, 1)} more)"
