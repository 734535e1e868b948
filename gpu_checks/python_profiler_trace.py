#!/usr/bin/env python3
"""Records a Chrome trace of a small bf16 MLP (matmuls + LayerNorm) with PyTorch's Python profiler,
so that opbench-trace and gpu_util_seed_algorithm.py can be checked on a trace that bench_ops did not
write.  Usage: python_profiler_trace.py OUT.trace.json"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    if len(sys.argv) != 2 or not torch.cuda.is_available():
        sys.exit(__doc__ + "\n(needs a CUDA device)")
    mlp = torch.nn.Sequential(torch.nn.Linear(4096, 14336), torch.nn.LayerNorm(14336),
                              torch.nn.Linear(14336, 4096), torch.nn.LayerNorm(4096)).cuda().bfloat16()
    x = torch.randn(8, 4096, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for _ in range(3):
            mlp(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                mlp(x)
            torch.cuda.synchronize()
    prof.export_chrome_trace(sys.argv[1])
    print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
