#!/usr/bin/env python3
"""The decode models of bench_ops' Llama2 and Mixtral families, built again in PyTorch and timed eager and
under torch.compile(mode="reduce-overhead") -- the LibTorch-C++-vs-compiled-Python comparison.

Same architecture, configuration, byte count and generation as benchmarks/decode/ (model.h, generate.h):
random weights made on the device, batch 1, a 6-token prompt fed through the one-token decode step, 200
greedy new tokens, wall time of a whole generation with the device synchronized, the median of 5
generations. int8: y = (x . W^T) * scales with W int8 per output row (gpt-fast's WeightOnlyInt8Linear);
experts: the two chosen experts' weights gathered (gpt-fast's ConditionalFeedForward).

  gpu_checks/decode_models_pytorch.py [--model llama2_7b_bf16 ...] [--backend eager|compile ...] [--layers N]
                            [--json OUT] [--compare bench_ops.json]
  --config tiny --device cpu runs the tiny configurations (CI checks the script and its byte count).
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from opbench_tools import benchmark_json

CONFIGS = {  # as benchmarks/decode/model.cpp
    "7b": dict(dim=4096, n_layers=32, n_heads=32, n_kv_heads=32, ffn=11008, vocab=32000, experts=0, top_k=0,
               rope_base=1e4, new_tokens=200),
    "8x7b": dict(dim=4096, n_layers=16, n_heads=32, n_kv_heads=8, ffn=14336, vocab=32000, experts=8, top_k=2,
                 rope_base=1e6, new_tokens=200),
    "tiny": dict(dim=256, n_layers=2, n_heads=4, n_kv_heads=4, ffn=512, vocab=512, experts=0, top_k=0,
                 rope_base=1e4, new_tokens=16),
    "tiny-moe": dict(dim=256, n_layers=2, n_heads=4, n_kv_heads=2, ffn=384, vocab=512, experts=8, top_k=2,
                     rope_base=1e6, new_tokens=16),
}
MODELS = {  # experiment -> (configuration, int8, bench_ops case prefix)
    "llama2_7b_bf16": ("7b", False, "Llama2/bf16/"),
    "llama2_7b_int8": ("7b", True, "Llama2/int8/"),
    "mixtral_8x7b_int8": ("8x7b", True, "Mixtral/int8/"),
}
PROMPT_LEN = 6


def streamed_bytes_per_token(c, int8):
    """Bytes one decode step streams (benchmarks/decode/model.h): linear weights (+ int8 scales), norms and
    the output head; not the embedding table; experts: top_k of them."""
    a = 2.0

    def lin(out, inp):
        return out * inp * (1.0 if int8 else a) + (out * a if int8 else 0.0)
    hd = c["dim"] // c["n_heads"]
    ffn = lin(2 * c["ffn"], c["dim"]) + lin(c["dim"], c["ffn"])
    if c["experts"]:
        ffn = lin(c["experts"], c["dim"]) + c["top_k"] * ffn
    layer = 2 * c["dim"] * a + lin((c["n_heads"] + 2 * c["n_kv_heads"]) * hd, c["dim"]) + \
        lin(c["dim"], c["n_heads"] * hd) + ffn
    return c["n_layers"] * layer + c["dim"] * a + lin(c["vocab"], c["dim"])


class Linear(torch.nn.Module):
    """Weights as buffers, so torch.compile's CUDA graphs treat them as static (nothing copied per call)."""

    def __init__(self, shape, int8, device):
        super().__init__()
        fan_in = shape[-1]
        if int8:
            self.register_buffer("w", torch.randint(-127, 128, shape, dtype=torch.int8, device=device))
            scale = (torch.rand(shape[:-1], device=device) + 0.5) / (73.3 * math.sqrt(fan_in))
            self.register_buffer("scale", scale.to(torch.bfloat16))
        else:
            self.register_buffer("w", torch.randn(shape, dtype=torch.bfloat16, device=device).mul_(1 / math.sqrt(fan_in)))
            self.scale = None

    def forward(self, x):
        if self.scale is None:
            return F.linear(x, self.w)
        return F.linear(x, self.w.to(x.dtype)) * self.scale

    def experts(self, x, idx):  # x [k, in], idx [k]: y[j] = W[idx[j]] . x[j]
        w = self.w[idx].to(x.dtype)
        y = torch.einsum("ki,koi->ko", x, w)
        return y if self.scale is None else y * self.scale[idx]


class Layer(torch.nn.Module):
    def __init__(self, c, int8, device, max_len):
        super().__init__()
        hd, e = c["dim"] // c["n_heads"], c["experts"]
        bf = dict(dtype=torch.bfloat16, device=device)
        shape = (lambda o, i: (e, o, i) if e else (o, i))
        self.register_buffer("attn_norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.register_buffer("ffn_norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.wqkv = Linear(((c["n_heads"] + 2 * c["n_kv_heads"]) * hd, c["dim"]), int8, device)
        self.wo = Linear((c["dim"], c["n_heads"] * hd), int8, device)
        self.w13 = Linear(shape(2 * c["ffn"], c["dim"]), int8, device)
        self.w2 = Linear(shape(c["dim"], c["ffn"]), int8, device)
        self.gate = Linear((e, c["dim"]), int8, device) if e else None
        self.register_buffer("k_cache", torch.zeros(c["n_kv_heads"], max_len, hd, **bf))
        self.register_buffer("v_cache", torch.zeros(c["n_kv_heads"], max_len, hd, **bf))


class Model(torch.nn.Module):
    def __init__(self, c, int8, device):
        super().__init__()
        self.c, self.hd = c, c["dim"] // c["n_heads"]
        self.max_len = PROMPT_LEN + c["new_tokens"]
        bf = dict(dtype=torch.bfloat16, device=device)
        self.register_buffer("tok_emb", torch.randn(c["vocab"], c["dim"], **bf))
        self.register_buffer("norm", torch.randn(c["dim"], **bf) * 0.1 + 1)
        self.output = Linear((c["vocab"], c["dim"]), int8, device)
        self.layers = torch.nn.ModuleList(Layer(c, int8, device, self.max_len) for _ in range(c["n_layers"]))
        inv_freq = 1.0 / (c["rope_base"] ** (torch.arange(0, self.hd, 2, dtype=torch.float64, device=device) / self.hd))
        angles = torch.outer(torch.arange(self.max_len, dtype=torch.float64, device=device), inv_freq)
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())


def rms_norm(x, w, eps=1e-5):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * w


def rope(x, cos, sin):  # x [heads, hd], pairs (2i, 2i+1)
    xf = x.float().view(x.shape[0], -1, 2)
    x0, x1 = xf[..., 0], xf[..., 1]
    return torch.stack([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1).flatten(1).type_as(x)


def decode_one_token(m, token, pos):
    """Logits' argmax after token [1] at position pos [1]; writes the KV cache."""
    c, hd = m.c, m.hd
    h = m.tok_emb[token]  # [1, dim]
    cos, sin = m.cos[pos], m.sin[pos]
    mask = (torch.arange(m.max_len, device=token.device) <= pos).view(1, 1, 1, -1)
    for layer in m.layers:
        qkv = layer.wqkv(rms_norm(h, layer.attn_norm))[0]
        q = rope(qkv[:c["n_heads"] * hd].view(c["n_heads"], hd), cos, sin)
        k = rope(qkv[c["n_heads"] * hd:(c["n_heads"] + c["n_kv_heads"]) * hd].view(c["n_kv_heads"], hd), cos, sin)
        v = qkv[(c["n_heads"] + c["n_kv_heads"]) * hd:].view(c["n_kv_heads"], hd)
        layer.k_cache.index_copy_(1, pos, k.unsqueeze(1))
        layer.v_cache.index_copy_(1, pos, v.unsqueeze(1))
        att = F.scaled_dot_product_attention(q.view(1, c["n_heads"], 1, hd), layer.k_cache.unsqueeze(0),
                                             layer.v_cache.unsqueeze(0), attn_mask=mask,
                                             enable_gqa=c["n_kv_heads"] != c["n_heads"])
        h = h + layer.wo(att.view(1, -1))
        xn = rms_norm(h, layer.ffn_norm)
        if c["experts"]:
            probs = torch.softmax(layer.gate(xn).float(), -1)[0]
            weights, idx = torch.topk(probs, c["top_k"])
            weights = weights / weights.sum()
            h13 = layer.w13.experts(xn.expand(c["top_k"], -1), idx)
            a = F.silu(h13[:, :c["ffn"]]) * h13[:, c["ffn"]:]
            h = h + (layer.w2.experts(a, idx) * weights.to(h.dtype).unsqueeze(1)).sum(0, keepdim=True)
        else:
            h13 = layer.w13(xn)
            h = h + layer.w2(F.silu(h13[:, :c["ffn"]]) * h13[:, c["ffn"]:])
    logits = m.output(rms_norm(h, m.norm))
    return torch.argmax(logits, -1)


def generate(m, step, prompt, device):
    """The prompt through the decode step, then new_tokens greedy tokens; returns the last token."""
    token = prompt[:1]
    for p in range(PROMPT_LEN - 1 + m.c["new_tokens"]):
        pos = torch.tensor([p], device=device)
        nxt = step(m, token, pos)
        token = prompt[p + 1:p + 2] if p + 1 < PROMPT_LEN else nxt.clone()
    return token


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def run(name, c, int8, backend, device, runs):
    start = time.perf_counter()
    torch.manual_seed(0)
    m = Model(c, int8, device)
    prompt = torch.tensor([(7 + 31 * i) % c["vocab"] for i in range(PROMPT_LEN)], device=device)
    step = decode_one_token
    if backend == "compile":
        # gpt-fast's generate.py settings; coordinate descent tuning also makes inductor decompose a
        # matrix-vector mm into a reduction it fuses with the int8 dequantize (without it, an int8 linear
        # is a cast kernel plus cuBLAS, half the speed)
        import torch._inductor.config as inductor_config
        inductor_config.coordinate_descent_tuning = True
        inductor_config.triton.unique_kernel_names = True
        inductor_config.fx_graph_cache = True
        step = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True)
    sync(device)
    first = time.perf_counter()
    with torch.no_grad():
        generate(m, step, prompt, device)
        sync(device)
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
    seconds = statistics.median(times)
    streamed = streamed_bytes_per_token(c, int8)
    tok_s = c["new_tokens"] / seconds
    return dict(model=name, backend="python_" + backend, layers=c["n_layers"], tok_s=tok_s,
                gbps=streamed * tok_s / 1e9, model_GB=streamed / 1e9, startup_s=startup,
                first_generation_s=first_generation, generations=runs, seconds=times)


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
    ap.add_argument("--model", action="append", choices=list(MODELS), help="default: all three")
    ap.add_argument("--backend", action="append", choices=["eager", "compile"], help="default: both")
    ap.add_argument("--config", choices=list(CONFIGS), help="override the model's configuration (tiny ones: CPU)")
    ap.add_argument("--layers", type=int, help="layer count (default: the model's; Mixtral 16)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--runs", type=int, default=5, help="timed generations per model and backend (gpt-fast: 5)")
    ap.add_argument("--eager-runs", type=int, help="timed generations of the eager backend (default: --runs)")
    ap.add_argument("--json")
    ap.add_argument("--compare", help="a bench_ops JSON to put beside these rows")
    args = ap.parse_args()
    results = []
    for name in args.model or list(MODELS):
        config, int8, _ = MODELS[name]
        c = dict(CONFIGS[args.config or config])
        if args.layers:
            c["n_layers"] = args.layers
        print(f"{name}: {streamed_bytes_per_token(c, int8) / 1e9:.3f} GB streamed per token", flush=True)
        for backend in args.backend or ["eager", "compile"]:
            try:
                runs = args.eager_runs if backend == "eager" and args.eager_runs else args.runs
                r = run(name, c, int8, backend, args.device, runs)
            except Exception as e:  # one failing model does not lose the others' rows
                print(f"{name} {backend}: failed: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            results.append(r)
            print(f"{name} {r['backend']}: {r['tok_s']:.1f} tok/s, {r['gbps']:.0f} GB/s, startup "
                  f"{r['startup_s']:.1f} s (first generation {r['first_generation_s']:.1f} s)", flush=True)
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
