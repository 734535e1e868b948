#!/usr/bin/env python3
"""The decode models of bench_ops' Llama2 and Mixtral families, built again in PyTorch and timed eager and
under torch.compile(mode="reduce-overhead") -- the LibTorch-C++-vs-compiled-Python comparison.

The model is benchmarks/decode/model.py (gpt-fast's semantics, the module bench_ops' inductor backend
compiles); the generation is generate.h's:
random weights made on the device, batch 1, a 6-token prompt fed through the one-token decode step, 200
greedy new tokens, wall time of a whole generation with the device synchronized, the median of 5
generations. int8: y = (x . W^T) * scales with W int8 per output row (gpt-fast's WeightOnlyInt8Linear);
int4 (llama2_7b_int4): torch.ops.aten._weight_int4pack_mm on gpt-fast's int4 layout (groups of 128, inner-k
tiles 8), every linear and the output head (gpt-fast's WeightOnlyInt4Linear);
experts: the two chosen experts' weights gathered (gpt-fast's ConditionalFeedForward).

  gpu_checks/decode_models_pytorch.py [--model llama2_7b_bf16 ...] [--backend eager|compile ...] [--layers N]
                            [--json OUT] [--compare bench_ops.json] [--trace DIR]
  --config tiny --device cpu runs the tiny configurations (CI checks the script and its byte count).
  --trace DIR: after the timed generations, one more under PyTorch's profiler, its Chrome trace in
  DIR/<model>.python_<backend>.trace.json: with bench_ops --opbench_trace DIR on the same models,
  gpu_checks/kernel_times_from_traces.py DIR puts both sides' kernels by name.
"""
import argparse
import functools
import importlib.util
import json
import pathlib
import statistics
import sys
import time

import torch

from opbench_tools import benchmark_json
from torch_compile_timings import package_kernel_sources, retuned_since, tuning_results


def _family_model():
    """benchmarks/decode/model.py: the decode models as gpt-fast writes them, spelled once for this check
    and for bench_ops' inductor backend."""
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "decode" / "model.py"
    spec = importlib.util.spec_from_file_location("opbench_decode_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model_py = _family_model()
CONFIGS, PROMPT_LEN, Model = model_py.CONFIGS, model_py.PROMPT_LEN, model_py.Model
decode_one_token, streamed_bytes_per_token = model_py.decode_one_token, model_py.streamed_bytes_per_token
MODELS = {  # experiment -> (configuration, weights: False bf16, True int8, "int4", bench_ops case prefix)
    "llama2_7b_bf16": ("7b", False, "Llama2/bf16/"),
    "llama2_7b_int8": ("7b", True, "Llama2/int8/"),
    "llama2_7b_int4": ("7b", "int4", "Llama2/int4/"),
    "mixtral_8x7b_int8": ("8x7b", True, "Mixtral/int8/"),
    "llama3_8b_bf16": ("8b", False, "Llama3/bf16/"),
    "llama3_8b_int8": ("8b", True, "Llama3/int8/"),
}


def generate(m, step, prompt, device):
    """The prompt through the decode step, then new_tokens greedy tokens; returns the last token. The
    position stays on the device, advanced in place as gpt-fast's generate.py does (and bench_ops):
    making it from a Python int each token is a blocking copy that synchronizes the stream."""
    token = prompt[:1]
    pos = torch.zeros(1, dtype=torch.long, device=device)
    for p in range(PROMPT_LEN - 1 + m.c["new_tokens"]):
        nxt = step(m, token, pos)
        token = prompt[p + 1:p + 2] if p + 1 < PROMPT_LEN else nxt.clone()
        pos += 1
    return token


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def use_gpt_fast_inductor_settings():
    """gpt-fast's generate.py settings; coordinate descent tuning also makes inductor decompose a
    matrix-vector mm into a reduction it fuses with the int8 dequantize (without it, an int8 linear is a
    cast kernel plus cuBLAS, half the speed). And the package's kernel sources, so that the package build's
    coordinate-descent choices come from inductor's cache: both time the same kernels
    (torch_compile_timings.py says why)."""
    import torch._inductor.config as inductor_config
    inductor_config.coordinate_descent_tuning = True
    inductor_config.triton.unique_kernel_names = True
    inductor_config.fx_graph_cache = True
    for setting, value in package_kernel_sources().items():
        *scope, name = setting.split(".")
        setattr(functools.reduce(getattr, scope, inductor_config), name, value)


def profile_generation(m, step, prompt, device, path):
    """One more generation under PyTorch's profiler (device kernels, or CPU ops without a GPU); its Chrome
    trace written to `path`."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CUDA] if device == "cuda" else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        generate(m, step, prompt, device)
        sync(device)
    prof.export_chrome_trace(str(path))


def run(name, c, int8, backend, device, runs, trace_dir=None):
    start = time.perf_counter()
    torch.manual_seed(0)
    m = Model(c, int8 is True, device, int4=int8 == "int4")
    prompt = torch.tensor([(7 + 31 * i) % c["vocab"] for i in range(PROMPT_LEN)], device=device)
    step = decode_one_token
    if backend == "compile":
        use_gpt_fast_inductor_settings()
        step = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True)
    sync(device)
    first = time.perf_counter()
    tuned_before = tuning_results() if backend == "compile" else {}
    with torch.no_grad():
        generate(m, step, prompt, device)
        sync(device)
        retuned = retuned_since(tuned_before) if backend == "compile" else {}
        startup = time.perf_counter() - start
        first_generation = time.perf_counter() - first
        generate(m, step, prompt, device)  # cudagraph trees record on the second call
        times = []
        for _ in range(runs):
            sync(device)
            t0 = time.perf_counter()
            generate(m, step, prompt, device)
            sync(device)
            times.append(time.perf_counter() - t0)
        if trace_dir:
            profile_generation(m, step, prompt, device, pathlib.Path(trace_dir) / f"{name}.python_{backend}.trace.json")
    seconds = statistics.median(times)
    streamed = streamed_bytes_per_token(c, int8 is True, int8 == "int4")
    tok_s = c["new_tokens"] / seconds
    return dict(model=name, backend="python_" + backend, layers=c["n_layers"], tok_s=tok_s,
                gbps=streamed * tok_s / 1e9, model_GB=streamed / 1e9, startup_s=startup,
                first_generation_s=first_generation, generations=runs, seconds=times,
                kernels_tuned_here=sum(retuned.values()), retuned=retuned)


def bench_ops_figures(path):
    """{case name: counters} and the read streams ({bytes: GB/s}, the fastest of each size, as bench_ops
    takes them) from a bench_ops JSON."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    cases, streams = {}, []
    for b in data.get("benchmarks", []):
        name = b["name"].replace("/iterations:1/manual_time", "")
        if b.get("GB/s"):
            streams.append((name, b.get("bytes"), b["GB/s"]))
        if "items/s" in b:
            cases[name] = b
    return cases, benchmark_json.stream_curves(streams).get("read", {})


def compare(results, path):
    cases, read = bench_ops_figures(path)
    largest = max(read) if read else None
    print(f"read ceiling (bench_ops Ceiling read streams): {read[largest]:.0f} GB/s over {largest / 2**30:g} GiB, "
          "each model held to the stream of its bytes per token" if read else "no read ceiling in " + path)
    print(f"{'model':<20}{'backend':<34}{'tok/s':>9}{'GB/s':>9}{'%bound':>8}")
    for name, (config, _, prefix) in MODELS.items():
        rows = [(k.split("/")[-1] + " (C++)", v["items/s"], v["GB/s"], v.get("model_GB")) for k, v in cases.items()
                if k.startswith(prefix)]
        rows += [(r["backend"], r["tok_s"], r["gbps"], r["model_GB"]) for r in results if r["model"] == name]
        for backend, tok_s, gbps, model_gb in rows:
            ceiling = benchmark_json.stream_gbps_at(read, model_gb * 1e9 if model_gb else largest) if read else None
            bound = 100 * gbps / ceiling if ceiling else float("nan")
            print(f"{name:<20}{backend:<34}{tok_s:>9.1f}{gbps:>9.0f}{bound:>7.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", choices=list(MODELS), help="default: all of them")
    ap.add_argument("--backend", action="append", choices=["eager", "compile"], help="default: both")
    ap.add_argument("--config", choices=list(CONFIGS), help="override the model's configuration (tiny ones: CPU)")
    ap.add_argument("--layers", type=int, help="layer count (default: the model's; Mixtral 16)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--runs", type=int, default=5, help="timed generations per model and backend (gpt-fast: 5)")
    ap.add_argument("--eager-runs", type=int, help="timed generations of the eager backend (default: --runs)")
    ap.add_argument("--json")
    ap.add_argument("--compare", help="a bench_ops JSON to put beside these rows")
    ap.add_argument("--trace", metavar="DIR", help="write a profiled generation's Chrome trace per row into DIR")
    args = ap.parse_args()
    if args.trace:
        pathlib.Path(args.trace).mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.model or list(MODELS):
        config, int8, _ = MODELS[name]
        c = dict(CONFIGS[args.config or config])
        if args.layers:
            c["n_layers"] = args.layers
        print(f"{name}: {streamed_bytes_per_token(c, int8 is True, int8 == 'int4') / 1e9:.3f} GB streamed per token",
              flush=True)
        for backend in args.backend or ["eager", "compile"]:
            try:
                runs = args.eager_runs if backend == "eager" and args.eager_runs else args.runs
                r = run(name, c, int8, backend, args.device, runs, args.trace)
            except Exception as e:  # one failing model does not lose the others' rows
                print(f"{name} {backend}: failed: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            results.append(r)
            print(f"{name} {r['backend']}: {r['tok_s']:.1f} tok/s, {r['gbps']:.0f} GB/s, startup "
                  f"{r['startup_s']:.1f} s (first generation {r['first_generation_s']:.1f} s), kernels tuned here "
                  f"{r['kernels_tuned_here']} {r['retuned']}", flush=True)
            if args.json:
                with open(args.json, "w", encoding="utf-8") as f:
                    json.dump(dict(device=torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
                                   torch=torch.__version__, results=results), f, indent=1)
            torch.cuda.empty_cache() if args.device == "cuda" else None
    if args.compare:
        compare(results, args.compare)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
