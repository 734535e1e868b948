"""The gate's policy file (opbench-gate --policy; the packaged default is perf-policy.json beside this module):
thresholds per case pattern, the significance level, the repetitions needed, the target tolerance, what an
inconclusive case does to the gate ("fail", the default, or "pass"), whether repetitions are compared in
pairs, and the allow-list. Every key is
optional; a missing one takes DEFAULTS. A malformed file raises InputError naming the file and the entry.
"""
from __future__ import annotations

import datetime
import math
import os
import re
from dataclasses import dataclass

from opbench_tools.benchmark_json import InputError, parse_json_file

DEFAULT_POLICY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perf-policy.json")
DEFAULTS = {"metric": "real_time", "alpha": 0.05, "min_repetitions": 9, "max_slowdown_pct": 3.0,
            "target_tolerance_pct": 5.0, "fail_on_missing": False, "fail_on_throttled": False, "inconclusive": "fail",
            "paired": False, "rules": [], "allow": []}
INCONCLUSIVE_CHOICES = ("fail", "pass")


@dataclass
class Policy:
    path: str
    metric: str
    alpha: float
    min_repetitions: int
    max_slowdown_pct: float
    target_tolerance_pct: float
    fail_on_missing: bool
    fail_on_throttled: bool  # a case whose repetitions lost samples to low clocks fails the gate
    inconclusive: str        # "fail": a case that cannot resolve its threshold ends the gate INCONCLUSIVE
    paired: bool             # the i-th repetitions of BASE and NEW ran side by side: compare them in pairs
    rules: list            # [(compiled regex, max_slowdown_pct)]
    allow: list            # [(index, compiled regex, reason, expires date or None)]

    def threshold_for(self, name: str) -> float:
        for regex, pct in self.rules:
            if regex.search(name):
                return pct / 100
        return self.max_slowdown_pct / 100


def _expect(path: str, where: str, value, kind: str, ok) -> None:
    if not ok(value):
        raise InputError(f"policy {path}: {where}: expected {kind}, got {value!r}")


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _regex(path: str, where: str, pattern) -> re.Pattern:
    _expect(path, where, pattern, "a regex string", lambda v: isinstance(v, str) and v)
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InputError(f"policy {path}: {where}: invalid regex {pattern!r}: {e}") from None


def _keys(path: str, where: str, obj: dict, allowed: set) -> None:
    unknown = sorted(set(obj) - allowed - {"comment"})
    if unknown:
        raise InputError(f"policy {path}: {where}: unknown key(s) {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(allowed))}")


def load_policy(path: str | None) -> Policy:
    """The policy at `path` (default: the packaged perf-policy.json, or DEFAULTS if that is absent),
    keys it omits taking the defaults. InputError naming the file and entry on any problem."""
    raw: dict = {}
    if path is not None or os.path.exists(DEFAULT_POLICY_PATH):
        path = DEFAULT_POLICY_PATH if path is None else path
        raw = read_json_object(path)
    p = path or "(built-in)"
    _keys(p, "top level", raw, set(DEFAULTS))
    v = dict(DEFAULTS, **raw)
    _expect(p, "metric", v["metric"], "a metric name", lambda x: isinstance(x, str) and x)
    _expect(p, "alpha", v["alpha"], "a number in (0, 1)", lambda x: _number(x) and 0 < x < 1)
    _expect(p, "min_repetitions", v["min_repetitions"], "an integer >= 2",
            lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 2)
    for key in ("max_slowdown_pct", "target_tolerance_pct"):
        _expect(p, key, v[key], "a number >= 0", lambda x: _number(x) and x >= 0)
    for key in ("fail_on_missing", "fail_on_throttled", "paired"):
        _expect(p, key, v[key], "true or false", lambda x: isinstance(x, bool))
    _expect(p, "inconclusive", v["inconclusive"], '"fail" or "pass"', lambda x: x in INCONCLUSIVE_CHOICES)
    for key in ("rules", "allow"):
        _expect(p, key, v[key], "a list", lambda x: isinstance(x, list))
    rules = [_rule(p, i, r) for i, r in enumerate(v["rules"])]
    allow = [_allow(p, i, a) for i, a in enumerate(v["allow"])]
    return Policy(p, v["metric"], v["alpha"], v["min_repetitions"], v["max_slowdown_pct"],
                  v["target_tolerance_pct"], v["fail_on_missing"], v["fail_on_throttled"], v["inconclusive"],
                  v["paired"], rules, allow)


def read_json_object(path: str) -> dict:
    try:
        data = parse_json_file(path)
    except InputError as e:
        raise InputError(f"policy {e}") from None
    _expect(path, "top level", data, "a JSON object", lambda x: isinstance(x, dict))
    return data


def _rule(p: str, i: int, rule) -> tuple:
    where = f"rules[{i}]"
    _expect(p, where, rule, "an object", lambda x: isinstance(x, dict))
    _keys(p, where, rule, {"pattern", "max_slowdown_pct"})
    _expect(p, f"{where}.max_slowdown_pct", rule.get("max_slowdown_pct"), "a number >= 0",
            lambda x: _number(x) and x >= 0)
    return _regex(p, f"{where}.pattern", rule.get("pattern")), rule["max_slowdown_pct"]


def _allow(p: str, i: int, entry) -> tuple:
    where = f"allow[{i}]"
    _expect(p, where, entry, "an object", lambda x: isinstance(x, dict))
    _keys(p, where, entry, {"pattern", "reason", "expires"})
    _expect(p, f"{where}.reason", entry.get("reason"), "a non-empty reason",
            lambda x: isinstance(x, str) and x.strip())
    expires = entry.get("expires")
    if expires is not None:
        try:
            expires = datetime.date.fromisoformat(expires)
        except (TypeError, ValueError):
            raise InputError(f"policy {p}: {where}.expires: expected a date YYYY-MM-DD, got {expires!r}") from None
    return i, _regex(p, f"{where}.pattern", entry.get("pattern")), entry["reason"], expires
