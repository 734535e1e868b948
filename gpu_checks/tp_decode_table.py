"""The table of gpu_session.sh's tp_decode step: tensor-parallel decode (Llama2TP, Llama2_70bTP) beside
the one-GPU graph cases of the same models, from the step's bench_ops JSON files in RESULTS_DIR:
tp_n1.json (one GPU), tp_n2.json, tp_n4.json (rank 0's, torchrun --nproc-per-node=N).

Per case: tok/s; the ratio to the one-GPU case of the same model and dtype; %ceiling (for a TP case the
share of the aggregate read bound: the sum of the GPUs' read ceilings / the bytes all GPUs stream per
token); the share of the token time in all-reduce; and the acceptance figures of issue 40 (7B bf16:
TP2 >= 1.5x and TP4 >= 2.2x one GPU; 70B bf16 TP4 >= 65% of the aggregate read bound).

    python3 gpu_checks/tp_decode_table.py RESULTS_DIR
"""
import json
import pathlib
import re
import sys

RATIO_GOALS = {("bf16", 2): 1.5, ("bf16", 4): 2.2}   # 7B bf16, against one GPU
BOUND_GOAL_70B = 65.0                               # % of the aggregate read bound, 70B bf16 TP4


def cases(path):
    """{name: benchmark entry} of the timed cases of one bench_ops JSON file, and its GPU's name."""
    if not path.exists():
        return {}, None
    run = json.loads(path.read_text())
    timed = {b["name"]: b for b in run["benchmarks"] if b.get("run_type", "iteration") == "iteration"}
    return timed, run.get("context", {}).get("opbench_device")


def key(name):
    """(model, dtype, tp) of a decode case name, tp 1 for the one-GPU family; None otherwise."""
    m = re.match(r"^Llama2(?:_70b)?(TP)?/([^/]+)/(\w+)-\d+L(?:-tp(\d+))?/graph$", name)
    if not m:
        return None
    return m.group(3), m.group(2), int(m.group(4) or 1)


def fmt(value, spec=".1f"):
    return "-" if value is None else format(value, spec)


def verdict(model, dtype, tp, ratio, bound):
    goal = RATIO_GOALS.get((dtype, tp)) if model == "7b" else None
    if goal is not None:
        return "-" if ratio is None else ("meets" if ratio >= goal else "misses") + f" {goal}x"
    if (model, dtype, tp) == ("70b", "bf16", 4):
        return "-" if bound is None else ("meets" if bound >= BOUND_GOAL_70B else "misses") + f" {BOUND_GOAL_70B:.0f}%"
    return ""


def rows(results_dir):
    runs = {n: cases(results_dir / f"tp_n{n}.json") for n in (1, 2, 4)}
    one_gpu = {key(name)[:2]: b["items/s"] for name, b in runs[1][0].items() if key(name) and "items/s" in b}
    out = []
    for n in (1, 2, 4):
        timed, gpu = runs[n]
        for name, b in timed.items():
            k = key(name)
            if not k or b.get("error_occurred") or b.get("skipped"):
                if k and n > 1:
                    out.append((name, n, gpu, None, None, None, None, b.get("error_message") or b.get("skip_message", "")))
                continue
            tok = b.get("items/s")
            base = one_gpu.get(k[:2])
            ratio = tok / base if tok and base and n > 1 else None
            bound = b.get("%ceiling")
            out.append((name, n, gpu, tok, ratio, bound, b.get("allreduce_%token"), verdict(*k, ratio, bound)))
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    table = rows(pathlib.Path(argv[1]))
    if not table:
        print("tp_decode: no decode case in tp_n1.json, tp_n2.json or tp_n4.json", file=sys.stderr)
        return 1
    print("| case | GPUs | GPU | tok/s | x one GPU | % read bound | % token in all-reduce | acceptance |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, gpu, tok, ratio, bound, share, note in table:
        print(f"| {name} | {n} | {gpu or '?'} | {fmt(tok)} | {fmt(ratio, '.2f')} | {fmt(bound)} | {fmt(share)} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
