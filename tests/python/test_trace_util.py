"""Tests for opbench-trace (opbench_tools.trace_util, GPU utilization from Chrome traces) and its
cross-check gpu_checks/gpu_util_seed_algorithm.py.  Expected figures are worked out by hand in the
comments; only the random cross-check compares the code with other code."""
import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from load_gpu_check import GPU_CHECKS, load_gpu_check
from opbench_tools import trace_util as tu

DATA = Path(__file__).resolve().parent / "data" / "traces"
FIXTURE = DATA / "kineto_gpu_small.json"           # hand-made, Kineto-shaped
REAL_GPU = DATA / "h200_torch211_mm_conv.json.gz"   # recorded on an H200, torch 2.11
seed = load_gpu_check("gpu_util_seed_algorithm")

GPU_PID, CPU_PID = 0, 4242


def meta(pid, labels):
    return {"name": "process_labels", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
            "args": {"labels": labels}}


def ev(ts, dur, name="k", pid=GPU_PID, cat="kernel", tid=7):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def gpu_trace(*events, extra_meta=()):
    return {"traceEvents": [meta(CPU_PID, "CPU"), meta(GPU_PID, "GPU 0"), *extra_meta, *events]}


def run_cli(*args, seed_script=False):
    tool = [str(GPU_CHECKS / "gpu_util_seed_algorithm.py")] if seed_script else ["-m", "opbench_tools.trace_util"]
    cmd = [sys.executable, *tool, *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


# ------------------------------------------------------------------ interval union

def test_overlapping_intervals():
    # [0,10] and [5,15] -> union [0,15] = 15; span 15
    r = tu.analyze(gpu_trace(ev(0, 10), ev(5, 10)))
    assert (r.busy_us, r.total_us, r.busy_segments, r.kernel_count) == (15.0, 15.0, 1, 2)
    assert r.gpu_util == 1.0 and r.total_source == "trace_span"


def test_nested_intervals():
    # [0,100] holds [10,20] and [30,40] -> 100
    r = tu.analyze(gpu_trace(ev(10, 10), ev(0, 100), ev(30, 10)))
    assert r.busy_us == 100.0 and r.busy_segments == 1 and r.total_us == 100.0


def test_disjoint_intervals_and_span():
    # [0,10] + [20,30] = 20 busy over a span of 30 -> 2/3
    r = tu.analyze(gpu_trace(ev(20, 10), ev(0, 10)))
    assert r.busy_us == 20.0 and r.total_us == 30.0 and r.busy_segments == 2
    assert r.gpu_util == 20.0 / 30.0
    assert (r.span_start_us, r.span_end_us) == (0.0, 30.0)


def test_touching_intervals_merge():
    # [0,10] and [10,20]: one segment of 20; [0,10] and [10.5,20]: two, 19.5 busy
    r = tu.analyze(gpu_trace(ev(0, 10), ev(10, 10)))
    assert (r.busy_us, r.busy_segments) == (20.0, 1)
    r = tu.analyze(gpu_trace(ev(0, 10), ev(10.5, 9.5)))
    assert (r.busy_us, r.busy_segments) == (19.5, 2)


def test_fractional_microseconds_and_chain():
    # [0.25,1.75] [1.5,2.0] [2.0,2.5] [3.125,3.25] zero-length at 2.25
    # union: [0.25,2.5] = 2.25, [3.125,3.25] = 0.125 -> 2.375; span 3.0
    r = tu.analyze(gpu_trace(ev(0.25, 1.5), ev(1.5, 0.5), ev(2.0, 0.5), ev(3.125, 0.125),
                             ev(2.25, 0)))
    assert r.busy_us == 2.375 and r.total_us == 3.0 and r.busy_segments == 2
    assert r.kernel_count == 5


def test_non_gpu_processes_and_non_complete_events_ignored():
    # CPU op [0,1000] and a "Spans" X event are ignored, so are GPU-pid instant/flow/
    # metadata events; busy [100,110] + [120,125] = 15, span 25
    r = tu.analyze(gpu_trace(
        ev(0, 1000, "aten::mm", pid=CPU_PID, cat="cpu_op"),
        ev(5, 1, "cudaLaunchKernel", pid=CPU_PID, cat="cuda_runtime"),
        ev(0, 5000, "PyTorch Profiler (0)", pid="Spans", cat="Trace"),
        ev(100, 10), ev(120, 5),
        {"ph": "i", "name": "marker", "pid": GPU_PID, "tid": 7, "ts": 0, "s": "t"},
        {"ph": "f", "name": "ac2g", "cat": "ac2g", "id": 1, "pid": GPU_PID, "tid": 7, "ts": 50},
        {"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": 7, "args": {"name": "stream 7"}},
    ))
    assert (r.busy_us, r.total_us, r.kernel_count, r.gpu_pids) == (15.0, 25.0, 2, (0,))


def test_several_gpu_processes_union_on_one_timeline():
    # GPU 0 [0,10], GPU 1 [5,20] -> one union [0,20] = 20 (the seed's rule)
    r = tu.analyze(gpu_trace(ev(0, 10), ev(5, 15, pid=1), extra_meta=[meta(1, "GPU 1")]))
    assert r.busy_us == 20.0 and r.gpu_pids == (0, 1)


def test_labels_as_list():
    r = tu.analyze({"traceEvents": [meta(3, ["GPU 3"]), ev(0, 4, pid=3)]})
    assert r.busy_us == 4.0 and r.gpu_pids == (3,)


def test_top_level_array_format():
    r = tu.analyze([meta(GPU_PID, "GPU 0"), ev(0, 3), ev(1, 1)])
    assert r.busy_us == 3.0


def test_fallback_on_category_without_gpu_labels():
    # no "GPU" process label: kernel [0,10], gpu_memcpy [5,20], old-style "Memset" [30,35]
    # -> 20 + 5 = 25 over span 35; cpu_op and cuda_runtime ignored
    trace = {"traceEvents": [
        meta(CPU_PID, "CPU"),
        ev(0, 1000, "aten::mm", pid=CPU_PID, cat="cpu_op"),
        ev(1, 2, "cudaMemcpyAsync", pid=CPU_PID, cat="cuda_runtime"),
        ev(0, 10, "ampere_sgemm_64x64_nn"),
        ev(5, 15, "Memcpy HtoD", cat="gpu_memcpy"),
        ev(30, 5, "Memset (Device)", cat="Memset"),
    ]}
    r = tu.analyze(trace)
    assert r.selection == "category_fallback"
    assert (r.busy_us, r.total_us, r.kernel_count, r.mm_busy_us) == (25.0, 35.0, 3, 10.0)


def test_labels_win_over_categories():
    # With a GPU-labelled pid, cat=kernel events elsewhere are not GPU events (seed rule).
    r = tu.analyze(gpu_trace(ev(0, 10), ev(100, 50, pid=99, cat="kernel")))
    assert r.busy_us == 10.0 and r.selection == "process_labels"


def test_exclude_category():
    # annotation [0,100] over kernels [10,20],[50,60]: 100 with it, 20 without it
    t = gpu_trace(ev(0, 100, "ProfilerStep#0", cat="gpu_user_annotation"), ev(10, 10), ev(50, 10))
    assert tu.analyze(t).busy_us == 100.0
    r = tu.analyze(t, exclude_categories=["GPU_USER_ANNOTATION"])
    assert (r.busy_us, r.total_us, r.kernel_count) == (20.0, 50.0, 2)


def test_given_total_and_zero_span():
    r = tu.analyze(gpu_trace(ev(0, 10), ev(5, 10)), total_us=60.0)
    assert (r.total_us, r.gpu_util, r.total_source) == (60.0, 0.25, "argument")
    r = tu.analyze(gpu_trace(ev(5, 0)))
    assert r.total_us == 0.0 and r.gpu_util is None and r.mm_util is None


# ------------------------------------------------------------------ mm/conv patterns

NAMES = {
    "ampere_sgemm_128x64_nn": (0, 10),               # gemm            [0,10]
    "void cudnn::detail::implicit_convolve_sgemm": (5, 10),   # conv   [5,15]
    "cutlass_80_tensorop_s1688gemm_64x64": (20, 5),  # cutlass, gemm   [20,25]
    "sm80_xmma_wgrad_implicit_gemm": (30, 5),        # wgrad           [30,35]
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT": (40, 10),  # modern   [40,50]
    "cublasLt::splitKreduce_kernel": (45, 10),       # modern          [45,55]
    "sm90_xmma_dgrad_kernel": (60, 5),               # modern (xmma)   [60,65]
    "Conv2D_upper_case": (70, 5),                    # nothing (case-sensitive)
    "elementwise_kernel": (80, 20),                  # nothing         [80,100]
}


def pattern_trace():
    return gpu_trace(*(ev(ts, dur, name) for name, (ts, dur) in NAMES.items()))


def test_seed_patterns():
    # [0,15] + [20,25] + [30,35] = 25; busy [0,15][20,25][30,35][40,55][60,65][70,75][80,100]
    # = 15+5+5+15+5+5+20 = 70 over span 100; mm_util is mm busy / total, not / busy
    r = tu.analyze(pattern_trace())
    assert (r.mm_busy_us, r.mm_kernel_count, r.busy_us, r.total_us) == (25.0, 4, 70.0, 100.0)
    assert r.mm_util == 0.25 and r.gpu_util == 0.7


def test_modern_patterns():
    # adds [40,55] (15) and [60,65] (5) -> 45
    pats = tu.SEED_MM_PATTERNS + tu.MODERN_MM_PATTERNS
    r = tu.analyze(pattern_trace(), mm_patterns=pats)
    assert (r.mm_busy_us, r.mm_kernel_count) == (45.0, 7)


def test_custom_regex_only():
    # "^Conv|^elem" alone: [70,75] + [80,100] = 25
    r = tu.analyze(pattern_trace(), mm_patterns=[r"^Conv", r"^elem"])
    assert (r.mm_busy_us, r.mm_kernel_count) == (25.0, 2)
    r = tu.analyze(pattern_trace(), mm_patterns=[])
    assert (r.mm_busy_us, r.mm_util) == (0.0, 0.0)


def test_seed_quirk_conv_substring_matches_convert():
    # the seed's "conv" is a plain substring: "convert" counts as mm/conv
    r = tu.analyze(gpu_trace(ev(0, 4, "unrolled_elementwise_kernel_convert_float_half")))
    assert r.mm_busy_us == 4.0


def test_modern_pattern_examples():
    import re
    hit = ["nvjet_hsh_256x128_64x4_2x1_v_bz_coopB_TNT", "sm90_xmma_fprop_direct_group_f16",
           "cublasLt::epilogue::impl::globalKernel", "gemv2T_kernel_val<int, int, float>",
           "volta_scudnn_128x64_relu_interior_nn_v1", "triton_tem_fused_addmm_relu_0"]
    for name in hit:
        assert any(re.search(p, name) for p in tu.MODERN_MM_PATTERNS), name
        assert not any(re.search(p, name) for p in tu.SEED_MM_PATTERNS), name
    for name in ["triton_poi_fused_add_0", "vectorized_elementwise_kernel", "reduce_kernel"]:
        assert not any(re.search(p, name) for p in tu.SEED_MM_PATTERNS + tu.MODERN_MM_PATTERNS)


# ------------------------------------------------------------------ fixture and CLI

def test_fixture_library():
    # GPU 0: annotation [1100,1340] covers all its kernels/memcpy/memset; GPU 1 [1400,1410]
    # busy 240 + 10 = 250, span 1100..1410 = 310; mm: sgemm 50 + xmma_gemm 25.5 + conv 10
    r = tu.analyze_file(str(FIXTURE))
    assert (r.busy_us, r.total_us, r.mm_busy_us, r.kernel_count) == (250.0, 310.0, 85.5, 8)
    # without the annotation: [1100,1160] 60 + [1200,1240] 40 + [1300,1325.5] 25.5
    #   + [1330,1332.25] 2.25 + [1400,1410] 10 = 137.75 in 5 segments
    # modern patterns add nvjet [1210,1240] = 30 -> 115.5
    r = tu.analyze_file(str(FIXTURE), None, tu.SEED_MM_PATTERNS + tu.MODERN_MM_PATTERNS,
                        exclude_categories=["gpu_user_annotation"])
    assert (r.busy_us, r.busy_segments, r.mm_busy_us, r.kernel_count) == (137.75, 5, 115.5, 7)


def test_cli_json():
    p = run_cli(FIXTURE, "--json", "--total-us", "1000")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert {"busy_us", "mm_busy_us", "total_us", "gpu_util", "mm_util", "kernel_count",
            "total_source"} <= set(d)
    assert (d["busy_us"], d["mm_busy_us"], d["total_us"]) == (250.0, 85.5, 1000.0)
    assert (d["gpu_util"], d["mm_util"], d["kernel_count"]) == (0.25, 0.0855, 8)
    assert d["total_source"] == "argument"


def test_cli_options_json():
    p = run_cli(FIXTURE, "--json", "--modern-patterns", "--exclude-cat", "gpu_user_annotation",
                "--total-s", "0.5")
    d = json.loads(p.stdout)
    assert (d["busy_us"], d["mm_busy_us"], d["total_us"]) == (137.75, 115.5, 500000.0)
    p = run_cli(FIXTURE, "--json", "--no-seed-patterns", "--mm-pattern", "^Memcpy",
                "--mm-pattern", "nvjet")
    d = json.loads(p.stdout)
    # Memcpy [1200,1220] + nvjet [1210,1240] -> 40; span total 310
    assert (d["mm_busy_us"], d["total_us"], d["total_source"]) == (40.0, 310.0, "trace_span")


def test_cli_text():
    p = run_cli(FIXTURE)
    assert p.returncode == 0, p.stderr
    assert "250.000 us" in p.stdout and "85.500 us" in p.stdout and "80.65%" in p.stdout
    assert "trace span" in p.stdout


def test_cli_bad_arguments():
    for args in (["--total-us", "0"], ["--total-us", "-3"], ["--mm-pattern", "("],
                 ["--total-us", "5", "--total-s", "1"]):
        p = run_cli(FIXTURE, *args)
        assert p.returncode == 2, args


def test_gzip_input(tmp_path):
    data = FIXTURE.read_bytes()
    gz = tmp_path / "trace.json.gz"
    gz.write_bytes(gzip.compress(data))
    disguised = tmp_path / "gz_named_plain.json"           # detection is by content
    disguised.write_bytes(gzip.compress(data))
    for path in (gz, disguised):
        d = json.loads(run_cli(path, "--json").stdout)
        assert (d["busy_us"], d["mm_busy_us"]) == (250.0, 85.5)


# ------------------------------------------------------------------ errors

GOOD_META = [meta(GPU_PID, "GPU 0")]
MALFORMED = [
    ("notjson.json", "this is not json", "not JSON", None),
    ("empty.json", "", "not JSON", None),
    ("nokey.json", {"events": []}, "traceEvents", None),
    ("notlist.json", {"traceEvents": {"a": 1}}, "not a list", None),
    ("scalar.json", '"hello"', "top level", None),
    ("notobj.json", {"traceEvents": [*GOOD_META, 5]}, "not an object", "traceEvents[1]"),
    ("nots.json", {"traceEvents": [*GOOD_META, ev(0, 1), {"ph": "X", "pid": 0, "dur": 3}]},
     "no 'ts'", "traceEvents[2]"),
    ("nodur.json", {"traceEvents": [*GOOD_META, {"ph": "X", "pid": 0, "ts": 3, "name": "k"}]},
     "no 'dur'", "traceEvents[1]"),
    ("strdur.json", {"traceEvents": [*GOOD_META, ev(0, "12")]}, "not a finite number",
     "traceEvents[1]"),
    ("booldur.json", {"traceEvents": [*GOOD_META, ev(True, 1)]}, "'ts'", "traceEvents[1]"),
    ("negdur.json", {"traceEvents": [*GOOD_META, ev(0, 1), ev(3, 2), ev(5, -1)]},
     "negative 'dur'", "traceEvents[3]"),
    ("nandur.json", '{"traceEvents": [{"name": "process_labels", "pid": 0, "ph": "M", '
                    '"args": {"labels": "GPU 0"}}, {"ph": "X", "pid": 0, "ts": 0, "dur": NaN}]}',
     "not a finite number", "traceEvents[1]"),
]


@pytest.mark.parametrize("name,content,what,where", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_exit_2(tmp_path, name, content, what, where):
    path = write(tmp_path, name, content)
    p = run_cli(path)
    assert p.returncode == 2
    err = p.stderr.strip()
    assert "\n" not in err and str(path) in err and what in err, err
    if where:
        assert where in err, err
    with pytest.raises(tu.TraceError) as exc:
        tu.analyze_file(str(path))
    assert not isinstance(exc.value, tu.NoGpuEventsError)


def test_bad_gzip_and_missing_file(tmp_path):
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    p = run_cli(bad)
    assert p.returncode == 2 and str(bad) in p.stderr and "gzip" in p.stderr
    missing = tmp_path / "missing.json"
    p = run_cli(missing)
    assert p.returncode == 2 and str(missing) in p.stderr


@pytest.mark.parametrize("content", [
    {"traceEvents": []},
    [],
    {"traceEvents": [meta(CPU_PID, "CPU"), ev(0, 10, "aten::mm", pid=CPU_PID, cat="cpu_op")]},
    {"traceEvents": [meta(GPU_PID, "GPU 0"), {"ph": "f", "pid": 0, "ts": 1, "name": "ac2g"}]},
])
def test_no_gpu_events_exit_1(tmp_path, content):
    path = write(tmp_path, "nogpu.json", content)
    p = run_cli(path)
    assert p.returncode == 1 and p.stdout == ""
    assert "no GPU events" in p.stderr and str(path) in p.stderr
    with pytest.raises(tu.NoGpuEventsError):
        tu.analyze_file(str(path))


def test_exclusion_leaving_nothing_is_exit_1(tmp_path):
    path = write(tmp_path, "ann.json", gpu_trace(ev(0, 10, "step", cat="gpu_user_annotation")))
    assert run_cli(path, "--exclude-cat", "gpu_user_annotation").returncode == 1


# ------------------------------------------------------------------ cross-checks

KERNEL_NAMES = ["ampere_sgemm_128x64_nn", "implicit_convolve_sgemm", "cutlass_80_wmma",
                "sm80_xmma_wgrad", "nvjet_tst_64x8", "vectorized_elementwise_kernel",
                "reduce_kernel", "Memcpy DtoD", "convert_kernel", "ProfilerStep#3"]


def random_trace(rng, n, base, ns_grid):
    """Kineto-like random trace; ts/dur on a 1 ns grid written with 3 decimals."""
    events = [meta(CPU_PID, "CPU"), meta(0, "GPU 0"), meta(1, "GPU 1"),
              {"name": "process_sort_index", "ph": "M", "pid": "Spans", "args": {}}]
    t = 0
    for _ in range(n):
        t += rng.choice([0, 0, rng.randint(0, 3000), rng.randint(0, 40000)])   # ns
        dur = rng.choice([0, rng.randint(1, 2000), rng.randint(1, 60000)])
        start = t - rng.randint(0, 5000) if rng.random() < 0.2 else t
        pid = rng.choice([0, 0, 1, CPU_PID, "Spans"])
        ns_grid.append((pid, start, dur))
        events.append(ev(round(base + start / 1000, 3), dur / 1000, rng.choice(KERNEL_NAMES),
                         pid=pid, tid=rng.choice([7, 8, 13])))
        if rng.random() < 0.1:
            events.append({"ph": "f", "pid": pid, "tid": 7, "ts": base + start / 1000, "name": "ac2g"})
    rng.shuffle(events)
    return {"traceEvents": events}


def exact_union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


@pytest.mark.parametrize("seed_value,base", [(7, 1000.0), (2024, 4441418386106.35)])
def test_random_trace_matches_seed_reimplementation(tmp_path, seed_value, base):
    rng = random.Random(seed_value)
    grid = []
    trace = random_trace(rng, 3000, base, grid)
    r = tu.analyze(trace)
    busy, mm_busy, n, n_mm = seed.seed_figures(trace["traceEvents"])
    assert r.busy_us == busy and r.mm_busy_us == mm_busy       # bit for bit
    assert (r.kernel_count, r.mm_kernel_count) == (n, n_mm)
    # and against an exact integer-nanosecond union (small base: float error negligible)
    if base < 1e6:
        gpu = [(s, s + d) for pid, s, d in grid if pid in (0, 1)]
        assert abs(r.busy_us - exact_union_ns(gpu) / 1000) < 1e-6
    # the two commands agree on the printed figures
    path = write(tmp_path, "random.json", trace)
    d = json.loads(run_cli(path, "--json").stdout)
    lines = dict(l.split() for l in run_cli(path, seed_script=True).stdout.splitlines())
    assert d["busy_us"] == float(lines["busy_us"]) and d["mm_busy_us"] == float(lines["mm_busy_us"])


def test_real_gpu_trace_fixture():
    # torch.profiler (CPU+CUDA) around record_function("region") with 3 x (bf16 mm + relu,
    # conv2d, float().sum()): 21 kernels, 3 memsets and the "region" gpu_user_annotation.
    trace = tu.load_trace(str(REAL_GPU))
    events = trace["traceEvents"]
    r = tu.analyze(trace)
    assert (r.busy_us, r.mm_busy_us, r.kernel_count, r.mm_kernel_count) == \
        seed.seed_figures(events)
    assert r.kernel_count == 25 and r.mm_kernel_count == 3    # seed patterns: xmma ..._gemm only
    assert r.gpu_pids == tuple(range(16))                     # Kineto labels GPU 0..15
    # the annotation starts first and covers every kernel: busy is exactly its dur
    (ann,) = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    assert r.busy_us == ann["dur"] == 1252.416 and r.busy_segments == 1
    # without it: compare with an exact integer-nanosecond union of kernels + memsets
    r2 = tu.analyze(trace, mm_patterns=tu.SEED_MM_PATTERNS + tu.MODERN_MM_PATTERNS,
                    exclude_categories=["gpu_user_annotation"])
    work = [e for e in events if e.get("ph") == "X" and e.get("pid") == 0
            and e.get("cat") in ("kernel", "gpu_memset")]
    ns = [(round(e["ts"] * 1000), round(e["ts"] * 1000) + round(e["dur"] * 1000)) for e in work]
    assert r2.kernel_count == len(work) == 24
    assert abs(r2.busy_us - exact_union_ns(ns) / 1000) < 0.02
    assert r2.mm_kernel_count == 6                            # + 3 nvjet_sm90_* GEMMs
    # the two commands agree on the real trace
    d = json.loads(run_cli(REAL_GPU, "--json").stdout)
    lines = dict(l.split() for l in run_cli(REAL_GPU, seed_script=True).stdout.splitlines())
    assert d["busy_us"] == float(lines["busy_us"]) and d["mm_busy_us"] == float(lines["mm_busy_us"])


def test_seed_reimplementation_hand_figures():
    busy, mm_busy, n, n_mm = seed.seed_figures(pattern_trace()["traceEvents"])
    assert (busy, mm_busy, n, n_mm) == (70, 25, 9, 4)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_real_cpu_profiler_trace(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile
    a = torch.randn(32, 32)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            (a @ a).sum()
    path = tmp_path / "cpu_trace.json"
    prof.export_chrome_trace(str(path))
    p = run_cli(path)
    # CPU-only: a "CPU" process label, cpu_op events -> no GPU events, exit 1
    assert p.returncode == 1, p.stderr
    assert "no GPU events" in p.stderr and str(path) in p.stderr
    gz = tmp_path / "cpu_trace.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert run_cli(gz).returncode == 1
    # the profiler's own events are readable: relabel its CPU process as a GPU one
    trace = json.loads(path.read_text())
    for e in trace["traceEvents"]:
        if e.get("name") == "process_labels":
            e["args"]["labels"] = "GPU 0"
    r = tu.analyze(trace)
    busy, mm_busy, n, _ = seed.seed_figures(trace["traceEvents"])
    assert r.kernel_count == n > 0 and r.busy_us == busy and r.mm_busy_us == mm_busy


def test_trace_kernels_groups_kernels_by_name_largest_first(tmp_path):
    """gpu_checks/kernel_times_from_traces.py: launches, mean time and share per kernel name; CPU events ignored."""
    events = [{"ph": "X", "cat": "kernel", "name": "gemv", "ts": 0, "dur": 30.0},
              {"ph": "X", "cat": "kernel", "name": "gemv", "ts": 40, "dur": 10.0},
              {"ph": "X", "cat": "kernel", "name": "attention", "ts": 60, "dur": 60.0},
              {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 500.0}]
    (tmp_path / "case.trace.json").write_text(json.dumps({"traceEvents": events}))
    out = subprocess.run([sys.executable, str(GPU_CHECKS / "kernel_times_from_traces.py"), str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0] == "case.trace.json: 3 kernels, 100 us"
    assert out[1].split() == ["1", "x", "60.00", "us", "=", "60.0%", "attention"]
    assert out[2].split() == ["2", "x", "20.00", "us", "=", "40.0%", "gemv"]
