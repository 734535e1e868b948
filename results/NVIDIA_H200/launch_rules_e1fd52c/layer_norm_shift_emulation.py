"""fp32 emulation of the two-pass LayerNorm kernel's row statistics (row_norm.cuh, 512 threads x 4
vectors, fp32 rows): the old one-shift sums against per-thread shifts combined around the row's first
element; prints the worst |y - y_float64| / (atol + rtol |y_float64|) at fp32's tolerance (1 = the limit)."""
import numpy as np
rng = np.random.default_rng(0)
f32 = np.float32
T, PER, VEC_STEP = 512, 4, 4

def thread_indices(cols):
    vec = cols // PER
    out = []
    for t in range(T):
        idx = []
        for first in range(t, vec, T * VEC_STEP):
            for i in range(VEC_STEP):
                v = first + i * T
                if v < vec: idx += [v * PER + k for k in range(PER)]
        out.append(np.array(idx))
    return out

def tree(vals):   # warp butterflies then the cross-warp sum, as a pairwise tree
    v = np.array(vals, dtype=f32)
    while len(v) > 1: v = (v[0::2] + v[1::2]).astype(f32)
    return v[0]

def seq_sums(x, idx, s):
    a = f32(0); b = f32(0)
    for j in idx:
        d = f32(x[j] - s); a = f32(a + d); b = f32(f32(d * d) + b)
    return a, b

def one_shift(x, IDX):
    s = f32(x[0]); A, B = zip(*[seq_sums(x, i, s) for i in IDX])
    n = f32(len(x)); sm = f32(tree(A) / n)
    return f32(s + sm), f32(max(tree(B) - n * sm * sm, 0))

def per_thread(x, IDX):
    c = f32(x[0]); N = f32(len(x)); parts = []
    for i in IDX:
        s = f32(x[i[0]]); a, b = seq_sums(x, i, s); n = f32(len(i)); sm = f32(a / n)
        parts.append((n, f32(f32(s - c) + sm), f32(max(b - a * sm, 0))))
    row_mean = f32(tree([f32(n * u) for n, u, _ in parts]) / N)
    m2 = tree([f32(m + f32(n * f32(u - row_mean) ** 2)) for n, u, m in parts])
    return f32(c + row_mean), m2

def worst(x, stats):
    cols = len(x); w = rng.standard_normal(cols).astype(f32); b = rng.standard_normal(cols).astype(f32)
    xd = x.astype(np.float64); m = xd.mean(); ref = (xd - m) / np.sqrt(((xd - m) ** 2).mean() + 1e-5) * w + b
    out = {}
    for name, f in stats:
        mean, m2 = f(x, IDX)
        rstd = f32(1 / np.sqrt(f32(m2 / f32(cols)) + f32(1e-5)))
        y = ((x - mean) * rstd).astype(f32) * w + b
        out[name] = np.max(np.abs(y - ref) / (1e-5 + 1.3e-6 * np.abs(ref)))
    return out

cols = 8192
IDX = thread_indices(cols)
for label, make in [("randn", lambda: rng.standard_normal(cols).astype(f32)),
                    ("first element 8", lambda: np.concatenate([[8.0], rng.standard_normal(cols - 1)]).astype(f32)),
                    ("30 + randn", lambda: (30 + rng.standard_normal(cols)).astype(f32))]:
    res = [worst(make(), [("one shift", one_shift), ("per-thread", per_thread)]) for _ in range(6)]
    print(f"{label:16s} one shift {max(r['one shift'] for r in res):.2f}  per-thread {max(r['per-thread'] for r in res):.2f}")
