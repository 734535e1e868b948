#!/usr/bin/env python3
"""torch.compile (inductor) in Python beside bench_ops' cases, timed the way bench_ops times them.

The cases are bench_ops' own inductor cases: their plan (`bench_ops --opbench_inductor_plan`) names each
case's module -- the one file beside its family that spells it (benchmarks/<family>/<family>.py), which
bench_ops' `inductor` backend compiles ahead of time with AOTInductor -- its dtype and shape, and the
inductor settings file. Here each module runs eager and under torch.compile(dynamic=False) with the same
settings (gpt-fast's by default), its output checked against eager, then timed with eager_timings.py's
method: the stream held, the same read flush of 2x L2, events, the median.

Same kernels, not two searches: coordinate-descent tuning picks a kernel's launch configuration by timing
candidates, so two compilations of one module settle on different configurations (up to 40% apart on
the smaller GEMVs). AOTInductor compiles every kernel with `triton.store_cubin` on, which is part of the
kernel's source and so of its tuning-cache key; this script turns it on too (package_kernel_sources: it
changes what is stored, not the kernel), so torch.compile's kernels have the package's sources and read
the package build's choices from inductor's cache (TORCHINDUCTOR_CACHE_DIR, or its default: run on the machine that built the
packages). Each case reports how many tuning results it wrote ("tuned here"): 0 means it reused the
package's tuning; more means the sources differ and the two searches are independent.

  torch_compile_timings.py --bench-ops build/bench_ops --filter REGEX --json out.json [--compare bench_ops.json]

--compare puts, per case, bench_ops' inductor (the AOTInductor package), this torch.compile, the own
kernel (`cuda`) and ATen (`aten`) side by side, with GB/s (bytes as bench_ops counts them).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

import torch

from eager_timings import Flush, time_eager
from opbench_tools import benchmark_json

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "int8": torch.int8}


def plan_of(bench_ops, case_filter):
    """bench_ops' plan of the inductor cases `case_filter` selects."""
    cmd = [bench_ops, "--opbench_inductor_plan=-", f"--benchmark_filter={case_filter}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"torch_compile_timings.py: {' '.join(cmd)}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def module_of(path):
    spec = importlib.util.spec_from_file_location("opbench_family_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tuning_results():
    """{path: text} of the tuning results in inductor's cache (its *.best_config files)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    found = {}
    for folder, _, names in os.walk(cache_dir()):
        for name in names:
            if name.endswith(".best_config"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    found[os.path.join(folder, name)] = f.read()
    return found


def tuned_since(before):
    """How many tuning results were written (new or rewritten) since `before` (tuning_results())."""
    return sum(retuned_since(before).values())


def retuned_since(before):
    """Of the tuning results rewritten since `before` (tuning_results()), how many kept the candidate
    configurations they were tuned over (their `configs_hash`) and how many had other candidates:
    {"new": n, "same_candidates": n, "other_candidates": n}. A rewrite over the same candidates means the
    cached choice was there and not taken; other candidates, that the kernel's heuristics differ."""
    counts = {"new": 0, "same_candidates": 0, "other_candidates": 0}
    for path, text in tuning_results().items():
        if path not in before:
            counts["new"] += 1
        elif before[path] != text:
            same = json.loads(before[path]).get("configs_hash") == json.loads(text).get("configs_hash")
            counts["same_candidates" if same else "other_candidates"] += 1
    return counts


def package_kernel_sources():
    """The inductor settings under which torch.compile runs the package build's kernels as the package
    does: its sources (so the package build's coordinate-descent choices, read from inductor's cache),
    with the runtime cost of the one setting that differs switched off: store_cubin makes each launch of
    a Python-wrapped kernel save its cubin for an AOT wrapper (a hash of the binary per launch, about 1 ms
    per call of a several-kernel module, which the timing would count); nothing here reads those cubins.
    And one compile thread: a kernel compiled in inductor's worker processes comes back pickled, and a
    pickled triton.Config loses its `found_by_coordesc` mark (torch 2.11), so the cached choice is taken
    as coordinate descent's start and tuned again -- which inductor does once its worker pool is ready,
    a few seconds into a process: the later seed cases and most kernels of a 32-layer decode step.
    Compiled in this process, the cached choice is used as it is."""
    from torch._inductor.runtime import triton_heuristics
    triton_heuristics.CachingAutotuner.save_gpu_kernel = lambda self, stream, launcher: None
    return {"triton.store_cubin": True, "compile_threads": 1}


def time_case(entry, samples, flush):
    """(eager us, torch.compile us, kernels tuned here) of one plan entry; raises when compiled and eager
    disagree."""
    torch.manual_seed(0)
    mod, inputs = module_of(entry["module"]).case(DTYPES[entry["dtype"]], entry["dims"], "cuda")
    mod = mod.eval()
    compiled = torch.compile(mod, dynamic=False)
    tuned_before = tuning_results()
    eager_out, compiled_out = mod(*inputs).float(), compiled(*inputs).float()
    tuned_here = tuned_since(tuned_before)
    torch.testing.assert_close(compiled_out, eager_out, rtol=2e-2, atol=2e-2 * eager_out.abs().max().item())
    eager_us = time_eager(lambda: mod(*inputs), samples, flush)
    return eager_us, time_eager(lambda: compiled(*inputs), samples, flush), tuned_here


def compare_table(bench_ops_json, record, tuned):
    """bench_ops' inductor and own kernel beside this torch.compile, per case; `tuned`: kernels each case
    tuned here (0: the package's tuning reused)."""
    ours = benchmark_json.successful_iterations(bench_ops_json)
    us = benchmark_json.medians_us(bench_ops_json)
    print(f"{'case':30} {'aot us':>8} {'py us':>8} {'aot vs py':>9} {'cuda us':>8} {'aten us':>8} "
          f"{'aot GB/s':>8} {'cuda vs aot':>11} {'tuned here':>10}")
    for case, inductor_us in record.items():
        if not case.endswith("/inductor"):
            continue
        base = case[: -len("/inductor")]
        aot, cuda, aten = us.get(case), us.get(base + "/cuda"), us.get(base + "/aten")
        nbytes = ours[case]["bytes"] if case in ours else None
        fmt = lambda v: f"{v:8.2f}" if v else f"{'-':>8}"   # noqa: E731
        vs_py = f"{100 * (aot / inductor_us - 1):+8.1f}%" if aot else f"{'-':>9}"
        own = f"{100 * (aot / cuda - 1):+10.1f}%" if aot and cuda else f"{'-':>11}"
        gbps = f"{nbytes / aot / 1e3:8.0f}" if aot and nbytes else f"{'-':>8}"
        print(f"{base:30} {fmt(aot)} {fmt(inductor_us)} {vs_py} {fmt(cuda)} {fmt(aten)} {gbps} {own} "
              f"{tuned.get(base, '-'):>10}")
    print("aot vs py: bench_ops' AOTInductor package against torch.compile here (+: the package is slower);"
          " cuda vs aot: + means the own kernel is faster than the package by that much; tuned here: kernels"
          " torch.compile tuned itself (0: it reused the package's coordinate-descent choices)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--bench-ops", default="build/bench_ops", help="the bench_ops whose cases to time")
    parser.add_argument("--filter", default="^([A-Za-z]+Norm/bf16|Gemv|GatherGemv|MLP)/.*/inductor$",
                        help="its inductor cases, as --benchmark_filter")
    parser.add_argument("--json", required=True)
    parser.add_argument("--compare", help="a bench_ops JSON with those cases (inductor, cuda, aten) to put beside")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_compile_timings.py: needs a CUDA device")
    plan = plan_of(args.bench_ops, args.filter)
    with open(plan["settings"]["path"], encoding="utf-8") as f:
        settings = json.load(f)
    flush, record, tuned = Flush(), {}, {}
    with torch.no_grad(), torch._inductor.config.patch({**settings, **package_kernel_sources()}):
        for entry in plan["packages"]:
            try:
                eager_us, inductor_us, tuned_here = time_case(entry, args.samples, flush)
            except Exception as e:   # one case's failure keeps the others
                print(f"{entry['case']}: failed: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            base = entry["case"][: -len("/inductor")]
            record[base + "/eager"], record[base + "/inductor"] = eager_us, inductor_us
            tuned[base] = tuned_here
            print(f"{entry['case']}: eager {eager_us:.2f} us, torch.compile {inductor_us:.2f} us, "
                  f"kernels tuned here {tuned_here}", flush=True)
            torch._dynamo.reset()
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "settings": settings,
                   "median_us": record, "tuned_here": tuned}, f, indent=1)   # "<case>/eager" and "<case>/inductor", microseconds
    if args.compare:
        compare_table(args.compare, record, tuned)
    return 0 if record else 1


if __name__ == "__main__":
    sys.exit(main())
