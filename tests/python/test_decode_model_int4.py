"""benchmarks/decode/model.py's int4 weight-only linears (gpt-fast's WeightOnlyInt4Linear, which
gpu_checks/decode_models_pytorch.py times on the GPU) on the CPU: the nibble order of pack_int4, the
product of the CPU int4 path against float64 with the dequantized weights, and the byte count beside the
C++ model's (model.h)."""
import importlib.util
import math
import pathlib

import pytest

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def model_py():
    spec = importlib.util.spec_from_file_location("opbench_decode_model", ROOT / "benchmarks" / "decode" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pack_int4_puts_the_even_column_in_the_high_nibble():
    m = model_py()
    packed = m.pack_int4(torch.tensor([[1, 2, 15, 0]]))
    assert packed.dtype == torch.uint8
    assert packed.tolist() == [[0x12, 0xF0]]


def test_int4_linear_matches_float64_with_the_dequantized_weights():
    m = model_py()
    torch.manual_seed(0)
    q = torch.randint(0, 16, (64, 256), dtype=torch.int32)
    s = torch.rand(64, 2) + 0.5
    z = torch.randn(64, 2) * 0.5
    sz = torch.stack([s, z], -1).to(torch.bfloat16)
    lin = m.Linear((64, 256), False, "cpu", int4=True)
    lin.w = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, m.INNER_K_TILES)
    lin.scales_and_zeros = sz.transpose(0, 1).contiguous()
    x = torch.randn(1, 256).to(torch.bfloat16)
    sd, zd = (sz[..., i].double().repeat_interleave(m.GROUP, -1) for i in (0, 1))
    want = x.double() @ ((q.double() - 8) * sd + zd).t()
    got = lin(x).double()
    assert got.shape == (1, 64)
    assert ((got - want).abs() <= 0.02 * want.abs() + 0.02 * math.sqrt(256) * want.std()).all()


def test_int4_bytes_per_token_count_half_a_byte_and_the_groups_qparams():
    m = model_py()
    c = m.CONFIGS["7b"]
    int4 = m.streamed_bytes_per_token(c, False, True)
    bf16 = m.streamed_bytes_per_token(c, False)
    norms = (2 * c["n_layers"] + 1) * c["dim"] * 2.0
    assert int4 - norms == pytest.approx((bf16 - norms) / 2 * (0.5 + 4 / 128), rel=1e-12)


def test_a_compiled_row_is_labelled_with_its_model(monkeypatch):
    """decode_models_pytorch.run() names its row after the model it timed, whatever the inductor settings it
    sets on the way (a loop over them once relabelled every compiled row with the last setting's name, so
    --compare found no Python row). torch.compile is stood in by the step itself: only the labelling counts."""
    monkeypatch.syspath_prepend(str(ROOT / "gpu_checks"))   # the script imports torch_compile_timings
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    from load_gpu_check import load_gpu_check
    script = load_gpu_check("decode_models_pytorch")
    import torch._inductor.config as inductor_config
    monkeypatch.setattr(script, "package_kernel_sources", lambda: {"triton.store_cubin": True})
    monkeypatch.setattr(script, "tuning_results", lambda: {})
    monkeypatch.setattr(script, "retuned_since", lambda before: {})
    monkeypatch.setattr(script.torch, "compile", lambda fn, **kwargs: fn)
    c = dict(script.CONFIGS["tiny"])
    # The settings run() changes, restored after by inductor's own patch (pytest's monkeypatch deletes a
    # sub-config's entry when it undoes, e.g. triton.store_cubin, which later tests then miss).
    touched = ["coordinate_descent_tuning", "fx_graph_cache", "triton.unique_kernel_names", "triton.store_cubin"]
    with inductor_config.patch({name: inductor_config.get_config_copy()[name] for name in touched}):
        row = script.run("llama2_7b_bf16", c, False, "compile", "cpu", 1)
        assert inductor_config.triton.store_cubin is True   # the package's setting was applied
    assert row["model"] == "llama2_7b_bf16"
    assert row["backend"] == "python_compile"


def test_trace_writes_a_profiled_generation_per_row(tmp_path, monkeypatch):
    """--trace DIR: each row's extra generation under the profiler lands in DIR/<model>.python_<backend>.trace.json,
    a Chrome trace that opbench's trace readers load (on the CPU: the step's ATen ops)."""
    monkeypatch.syspath_prepend(str(ROOT / "gpu_checks"))
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    from load_gpu_check import load_gpu_check
    from opbench_tools import trace_events
    script = load_gpu_check("decode_models_pytorch")
    c = dict(script.CONFIGS["tiny"])
    row = script.run("llama2_7b_bf16", c, False, "eager", "cpu", 1, tmp_path)
    path = tmp_path / "llama2_7b_bf16.python_eager.trace.json"
    events = trace_events.trace_events(trace_events.load_trace(str(path)), str(path))
    assert row["tok_s"] > 0
    assert any(isinstance(e, dict) and e.get("name") == "aten::mm" for e in events)
