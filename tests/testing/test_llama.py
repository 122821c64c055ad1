"""The LLaMA benchmark graph: structure, text round trip, and numerics vs plain numpy."""

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.context import parse_module
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import build_llama, layer_op_counts, rope_tables

GQA_LAYER = {
    "rms_norm": 2, "matmul": 7, "reshape": 4, "transpose": 4, "rope": 2, "narrow": 4,
    "concat": 2, "attention": 1, "add": 2, "silu": 1, "mul": 1,
}  # fmt: skip
"""One layer with 4 query heads sharing 2 kv heads: repeat_kv narrows each kv head once."""

SMALL = {"batch": 2, "seq": 5, "dim": 16, "n_heads": 4, "n_kv_heads": 2, "ffn": 24}


def op_histogram(module) -> Counter:
    f = find_function(module)
    return Counter(op.name.removeprefix("mir.") for op in f.body.block.ops if op.name.startswith("mir."))


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_op_counts_scale_with_layers(n_layers):
    module = build_llama(n_layers)
    module.verify()
    assert op_histogram(module) == Counter({k: v * n_layers for k, v in GQA_LAYER.items()})


def test_layer_op_counts_helper_matches_literal_table():
    assert layer_op_counts(4, 2) == GQA_LAYER
    assert sum(GQA_LAYER.values()) == 30


def test_multi_head_attention_needs_no_repeat_kv():
    module = build_llama(1, n_heads=4, n_kv_heads=4)
    module.verify()
    hist = op_histogram(module)
    assert "narrow" not in hist and "concat" not in hist
    assert hist == Counter(layer_op_counts(4, 4))


def test_vocab_adds_final_norm_and_lm_head():
    module = build_llama(1, vocab=50)
    module.verify()
    hist = op_histogram(module)
    assert hist["rms_norm"] == 3 and hist["matmul"] == 8
    f = find_function(module)
    assert f.function_type.outputs.data[0].get_shape() == (1, 16, 50)


def test_arguments_are_named_inputs_then_parameters():
    f = find_function(build_llama(2))
    args = graph_args(f)
    assert [(a.name, a.is_param) for a in args[:3]] == [("x", False), ("cos", False), ("sin", False)]
    per_layer = ["attn_norm.gamma", "attn_norm.beta", "wq", "wk", "wv", "wo",
                 "ffn_norm.gamma", "ffn_norm.beta", "w_gate", "w_up", "w_down"]  # fmt: skip
    expected = [f"layers.{i}.{n}" for i in range(2) for n in per_layer]
    assert [a.name for a in args[3:]] == expected
    assert all(a.is_param for a in args[3:])
    shapes = {a.name: tuple(a.type.get_shape()) for a in args}
    assert shapes["layers.1.wk"] == (64, 32)  # 2 kv heads of head_dim 16
    assert shapes["cos"] == (16, 8)


@pytest.mark.parametrize("generic", [False, True])
def test_text_round_trip(generic):
    from io import StringIO

    from xdsl.printer import Printer

    module = build_llama(2, vocab=32)

    def text(m):
        out = StringIO()
        Printer(stream=out, print_generic_format=generic).print_op(m)
        return out.getvalue()

    first = text(module)
    reparsed = parse_module(first)
    reparsed.verify()
    assert text(reparsed) == first
    assert op_histogram(reparsed) == op_histogram(module)


def test_bf16_graph_verifies():
    module = build_llama(1, dtype="bf16", **SMALL)
    module.verify()
    assert "bf16" in str(module) and "f32" not in str(module)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"dim": 30}, "multiple of n_heads"), ({"n_kv_heads": 3}, "multiple of n_kv_heads"),
     ({"dim": 12, "n_heads": 4}, "even")],
)  # fmt: skip
def test_invalid_dimensions_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_llama(1, **kwargs)


def test_rope_tables_match_closed_form():
    cos, sin = rope_tables(6, 8)
    assert cos.shape == sin.shape == (6, 4)
    s, i = 5, 3
    angle = s / 10000.0 ** (2 * i / 8)
    assert cos[s, i] == pytest.approx(np.cos(angle), rel=1e-6)
    assert sin[s, i] == pytest.approx(np.sin(angle), rel=1e-6)
    np.testing.assert_array_equal(cos[0], 1.0)


# An independent LLaMA layer in float64 numpy (HF-style rotate_half, np.repeat for GQA).


def reference_layer(x, cos, sin, w, n_heads, n_kv_heads, eps=1e-6):
    batch, seq, dim = x.shape
    hd = dim // n_heads

    def norm(v, gamma, beta):
        return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + eps) * gamma + beta

    def heads(v, n):
        return v.reshape(batch, seq, n, hd).transpose(0, 2, 1, 3)

    def rotary(v):
        c, s = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
        rotated = np.concatenate([-v[..., hd // 2 :], v[..., : hd // 2]], axis=-1)
        return v * c + rotated * s

    h = norm(x, w["attn_norm.gamma"], w["attn_norm.beta"])
    q = rotary(heads(h @ w["wq"], n_heads))
    k = np.repeat(rotary(heads(h @ w["wk"], n_kv_heads)), n_heads // n_kv_heads, axis=1)
    v = np.repeat(heads(h @ w["wv"], n_kv_heads), n_heads // n_kv_heads, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    scores = np.where(np.tril(np.ones((seq, seq), bool)), scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    attn = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, dim)
    x = x + attn @ w["wo"]
    h = norm(x, w["ffn_norm.gamma"], w["ffn_norm.beta"])
    gate, up = h @ w["w_gate"], h @ w["w_up"]
    return x + (gate / (1 + np.exp(-gate)) * up) @ w["w_down"]


def random_weights(module, seed):
    """Inputs for every argument: scaled normal weights, real RoPE tables."""
    rng = np.random.default_rng(seed)
    args = graph_args(find_function(module))
    seq = args[0].type.get_shape()[1]
    cos, sin = rope_tables(seq, 2 * args[1].type.get_shape()[1])
    values = {}
    for a in args:
        shape = tuple(a.type.get_shape())
        scale = 1.0 / np.sqrt(shape[0]) if len(shape) == 2 else 0.5
        values[a.name] = (rng.standard_normal(shape) * scale + (1.0 if "gamma" in a.name else 0.0)).astype(np.float32)
    values["cos"], values["sin"] = cos, sin
    return [values[a.name] for a in args], values


@pytest.mark.parametrize("n_kv_heads", [2, 4, 1])
def test_one_layer_matches_numpy_reference(n_kv_heads):
    module = build_llama(1, **{**SMALL, "n_kv_heads": n_kv_heads})
    module.verify()
    inputs, values = random_weights(module, seed=n_kv_heads)
    (out,) = run_function(module, "llama", inputs)
    f64 = {k: v.astype(np.float64) for k, v in values.items()}
    weights = {k.removeprefix("layers.0."): v for k, v in f64.items()}
    expected = reference_layer(f64["x"], f64["cos"], f64["sin"], weights, 4, n_kv_heads)
    assert out.dtype == np.float32 and out.shape == (2, 5, 16)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_two_layers_with_lm_head_match_numpy_reference():
    module = build_llama(2, vocab=11, **SMALL)
    inputs, values = random_weights(module, seed=9)
    (out,) = run_function(module, "llama", inputs)
    f64 = {k: v.astype(np.float64) for k, v in values.items()}
    x = f64["x"]
    for i in range(2):
        weights = {k.removeprefix(f"layers.{i}."): v for k, v in f64.items() if k.startswith(f"layers.{i}.")}
        x = reference_layer(x, f64["cos"], f64["sin"], weights, 4, 2)
    normed = x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-6) * f64["norm.gamma"] + f64["norm.beta"]
    np.testing.assert_allclose(out, normed @ f64["lm_head"], rtol=2e-4, atol=2e-4)


def test_shipped_example_is_the_generator_output(tmp_path):
    from rlx_xdsl.testing.llama import EXAMPLE_CONFIG, llama_text, main

    shipped = (Path(__file__).resolve().parents[2] / "examples" / "llama_block.mlir").read_text()
    assert shipped == llama_text(1, **EXAMPLE_CONFIG), "regenerate with the command in the file's header"
    command = shipped.splitlines()[1].split("python -m rlx_xdsl.testing.llama ", 1)[1].split()
    main([*command, "-o", str(tmp_path / "out.mlir")])
    assert (tmp_path / "out.mlir").read_text() == shipped
    module = parse_module(shipped)
    module.verify()
    assert op_histogram(module) == Counter(GQA_LAYER)


def test_compile_time_benchmark_smoke(capsys, monkeypatch):
    """The benchmark runs end to end and prints its tables (timings are not checked)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "compile_time.py"
    spec = importlib.util.spec_from_file_location("compile_time", path)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "compile_time", bench)  # dataclasses look their module up
    spec.loader.exec_module(bench)
    assert bench.layer_counts(32) == [1, 2, 4, 8, 16, 32]
    assert bench.main(["--max-layers", "2", "--repeat", "1", "--no-stock", "--max-depth", "16"]) == 0
    out = capsys.readouterr().out
    assert "# pass rlx-lower-hir runs on build_llama_hir(N); ops = those of the build_llama(N) it produces" in out
    ops_1 = 3 + sum(GQA_LAYER.values())  # module, func, return + one layer
    for phase in ("parse", "verify", "print", "rlx-dce", "ours (total)"):
        assert f"     1 {ops_1:>6}  {phase:<16}" in out
        assert f"     2 {ops_1 + 30:>6}  {phase:<16}" in out
    assert f"     2 {ops_1 + 30:>6}  rlx-lower-hir   " in out
    assert "# linearity: time per op at 2 layers / time per op at 1 layers" in out
    assert "# pass rlx-decompose-backward runs on build_llama_training(N)" in out
    assert "rlx-lower-softmax-cross-entropy" in out.split("# linearity")[1]
    for name, graph in [
        ("rlx-mark-transform-regions", "build_vision"),
        ("rlx-fuse-region-prologue", "build_vision_marked"),
        ("rlx-decompose-fusion-regions", "build_vision_fused"),
    ]:  # RLX's FK region passes run on vision graphs that have their patterns
        assert f"# pass {name} runs on {graph}(N)" in out
    assert "# skipped pass" not in out  # every registered pass is timed (rlx-jvp/hvp/vmap need options)
    for name in ("rlx-jvp", "rlx-hvp", "rlx-vmap"):
        assert f"  {name} " in out
    nesting = out.split("# nesting depth:")[1]  # the passes over regions, at depths 8 and 16
    for spec in bench.NESTED_PASSES:
        assert f"\n{spec:<40} " in nesting


def test_compile_time_benchmark_breaks_the_inference_pipeline_down(tmp_path, monkeypatch):
    """Each phase of the whole-process pipeline is timed, the verify only after passes that changed the IR."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "compile_time.py"
    spec = importlib.util.spec_from_file_location("compile_time", path)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "compile_time", bench)
    spec.loader.exec_module(bench)
    graph = tmp_path / "llama.mlir"
    graph.write_text(bench.print_module(build_llama(1)))
    phases = bench.pipeline_phases(graph)
    passes = [spec.split("{")[0] for spec in bench.PIPELINES[bench.INFERENCE]]
    assert "rlx-fusion-pipeline" in passes and "rlx-plan-memory" in passes
    assert list(phases)[:2] == ["parse", "verify"] and list(phases)[-1] == "print"
    assert set(passes) <= set(phases) and "verify after passes" in phases
    assert all(seconds >= 0 for seconds in phases.values())
