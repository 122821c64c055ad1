"""Random-number and sampling MIR ops against independent oracles: `numpy.random.Philox`
(raw bits, and its Generator's `uniform`), scipy's distribution tests, and the filtered
softmax written out row by row."""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from xdsl.dialects.builtin import TensorType, f32, f64
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import layers
from rlx_xdsl.autodiff.registry import VJP_RULES, no_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import random as rnd
from rlx_xdsl.dialects.traits import Precision, Sampling, precision_class
from rlx_xdsl.interpreters.mir.random import philox_blocks
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.expected_errors import expected_error_test

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-random.mlir"
test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


def numpy_block(seed: int, counter: int) -> np.ndarray:
    """numpy's Philox-4x64-10 block for `counter` (numpy increments before each block)."""
    return np.random.Philox(key=seed % 2**64, counter=(counter - 1) % 2**256).random_raw(4)


def numpy_generator(seed: int, counter: int) -> np.random.Generator:
    return np.random.Generator(np.random.Philox(key=seed % 2**64, counter=(counter - 1) % 2**256))


def run(build, *inputs):
    """Run `build(b, *args)` as a function of `inputs`; its output(s)."""
    b = GraphBuilder("f")
    args = [b.input(f"x{i}", np.shape(x), "i64" if np.asarray(x).dtype == np.int64 else "f32")
            for i, x in enumerate(inputs)]
    out = build(b, *args)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    results = run_function(b.module(), "f", [np.asarray(x) for x in inputs])
    return results if len(results) > 1 else results[0]


@pytest.mark.parametrize("seed", [0, 7, -3, 2**62 + 11])
def test_philox_blocks_are_numpys_bits(seed):
    counters = [0, 1, 2, 3, 1000, 2**63, 2**64 - 1]
    ours = np.stack(philox_blocks(np.array(counters, np.uint64), seed), axis=-1)
    for row, c in zip(ours, counters):
        np.testing.assert_array_equal(row, numpy_block(seed, c))


@pytest.mark.parametrize("offset", [None, 0, 3])
def test_rng_uniform_f64_is_numpy_generators_uniform(offset):
    shape, seed, low, high = (2, 3), 11, -2.0, 5.0
    t = TensorType(f64, list(shape))
    inputs = [] if offset is None else [np.array(offset, np.int64)]
    got = run(lambda b, *o: b.rng_uniform(t, *o, seed=seed, low=low, high=high), *inputs)
    base = (offset or 0) * 6
    expected = [numpy_generator(seed, base + i).uniform(low, high) for i in range(6)]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.ravel(), expected)


def test_offsets_continue_the_stream():
    """Step o's tensor of n elements is elements o*n .. o*n+n-1 of one long draw."""
    long = run(lambda b: b.rng_normal(TensorType(f32, [12]), seed=5))
    for step in range(3):
        part = run(lambda b, o: b.rng_normal(TensorType(f32, [2, 2]), o, seed=5), np.array(step, np.int64))
        np.testing.assert_array_equal(part.ravel(), long[4 * step : 4 * step + 4])


def test_rng_normal_uses_box_muller_on_words_0_and_1():
    got = run(lambda b: b.rng_normal(TensorType(f64, [5]), seed=2, mean=1.0, std=3.0))
    for i, value in enumerate(got):
        w0, w1 = (int(w) >> 11 for w in numpy_block(2, i)[:2])
        u0, u1 = w0 / 2**53, w1 / 2**53
        assert value == pytest.approx(1.0 + 3.0 * np.sqrt(-2 * np.log(1 - u0)) * np.cos(2 * np.pi * u1), rel=1e-12)


N = 100_000


def test_distributions_pass_goodness_of_fit():
    uniform = run(lambda b: b.rng_uniform(TensorType(f32, [N]), seed=1, low=2.0, high=4.0))
    normal = run(lambda b: b.rng_normal(TensorType(f32, [N]), seed=1, mean=-1.0, std=0.5))
    assert uniform.min() >= 2.0 and uniform.max() <= 4.0
    counts, _ = np.histogram(uniform, bins=20, range=(2.0, 4.0))
    assert stats.chisquare(counts).pvalue > 1e-3
    assert stats.kstest(normal, stats.norm(-1.0, 0.5).cdf).pvalue > 1e-3


def test_seeds_and_offsets_give_different_numbers():
    t = TensorType(f32, [8])
    a = run(lambda b: b.rng_uniform(t, seed=1))
    assert not np.array_equal(a, run(lambda b: b.rng_uniform(t, seed=2)))
    assert not np.array_equal(a, run(lambda b, o: b.rng_uniform(t, o, seed=1), np.array(1, np.int64)))
    np.testing.assert_array_equal(a, run(lambda b: b.rng_uniform(t, seed=1)))


# --- mir.sample ------------------------------------------------------------------------


def filtered_softmax(row: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """The distribution `sample` draws from, written out with Python sorting."""
    z = row.astype(np.float64) / temperature
    order = sorted(range(len(z)), key=lambda j: (-z[j], j))
    kept = order[:top_k] if top_k else order
    p = np.zeros_like(z)
    p[kept] = np.exp(z[kept] - z[kept].max())
    p /= p.sum()
    mass, nucleus = 0.0, []
    for j in order:
        if p[j] > 0 and mass < top_p:
            nucleus.append(j)
            mass += p[j]
    q = np.zeros_like(p)
    q[nucleus] = p[nucleus]
    return q / q.sum()


LOGITS = np.array([1.0, 2.5, 0.3, 2.5, -1.0, 1.7], np.float32)


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), [(1.0, 0, 1.0), (0.7, 4, 1.0), (1.3, 0, 0.8), (2.0, 5, 0.6)])
def test_sample_frequencies_follow_the_filtered_softmax(temperature, top_k, top_p):
    rows = 20_000
    logits = np.tile(LOGITS, (rows, 1))
    ids = run(lambda b, x: b.sample(x, seed=3, temperature=temperature, top_k=top_k, top_p=top_p), logits)
    assert ids.dtype == np.int64 and ids.shape == (rows,)
    p = filtered_softmax(LOGITS, temperature, top_k, top_p)
    counts = np.bincount(ids, minlength=6)
    assert np.all(counts[p == 0] == 0)
    kept = p > 0
    assert stats.chisquare(counts[kept], rows * p[kept]).pvalue > 1e-3


def test_sample_at_temperature_zero_is_greedy():
    logits = np.random.default_rng(0).standard_normal((5, 9)).astype(np.float32)
    logits[2, [1, 4]] = 9.0  # a tie: the first index wins
    ids = run(lambda b, x: b.sample(x, seed=1, temperature=0.0), logits)
    np.testing.assert_array_equal(ids, [int(np.argmax(r)) for r in logits])


def test_sample_uses_one_draw_per_row_from_its_counter():
    """Row b picks the first id whose cumulative probability exceeds u(counter offset*B + b)."""
    logits = np.random.default_rng(1).standard_normal((4, 7)).astype(np.float32)
    ids = run(lambda b, x, o: b.sample(x, o, seed=9, temperature=1.0), logits, np.array(2, np.int64))
    for row, (x, got) in enumerate(zip(logits, ids)):
        u = numpy_generator(9, 2 * 4 + row).random()
        cdf = np.cumsum(filtered_softmax(x, 1.0, 0, 1.0))
        assert got == int(np.searchsorted(cdf, u, side="right"))


def test_traits_and_no_gradient():
    layers.load("vjp")
    assert rnd.SampleOp.has_trait(Sampling) and not rnd.RngUniformOp.has_trait(Sampling)
    assert precision_class(rnd.SampleOp) is Precision.REDUCTION
    assert precision_class(rnd.RngNormalOp) is Precision.COMPUTE
    for op in rnd.OPS:
        assert VJP_RULES[op] is no_gradient


def test_infinite_parameters_are_refused():
    b = GraphBuilder("f")
    b.output(b.rng_normal(TensorType(f32, [2]), seed=0, mean=float("inf")))
    with pytest.raises(VerifyException, match="mean must be finite, got inf"):
        b.module().verify()


# --- mir.sample on non-finite rows ----------------------------------------------------------


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), [(1.0, 0, 1.0), (0.5, 2, 0.9), (0.0, 0, 1.0)])
def test_sample_picks_a_positive_infinite_logit(temperature, top_k, top_p):
    """A +inf logit is the softmax's limit: all the mass is on it (it was id 0 every time)."""
    logits = np.tile(np.array([0.0, 1.0, np.inf, -1.0], np.float32), (64, 1))
    ids = run(lambda b, x: b.sample(x, seed=2, temperature=temperature, top_k=top_k, top_p=top_p), logits)
    np.testing.assert_array_equal(ids, 2)


def test_sample_spreads_over_several_positive_infinite_logits():
    """Equal +inf logits share the mass equally, as equal finite logits do; greedy takes the first."""
    rows = 4000
    logits = np.tile(np.array([np.inf, 5.0, np.inf, -np.inf], np.float32), (rows, 1))
    ids = run(lambda b, x: b.sample(x, seed=5, temperature=1.0), logits)
    counts = np.bincount(ids, minlength=4)
    assert counts[1] == counts[3] == 0
    assert stats.chisquare(counts[[0, 2]]).pvalue > 1e-3
    np.testing.assert_array_equal(run(lambda b, x: b.sample(x, seed=5, temperature=0.0), logits), 0)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
@pytest.mark.parametrize(("row", "what"), [([0.0, np.nan, 1.0], "holds a NaN"), ([-np.inf] * 3, "is all -inf")])
def test_sample_of_a_row_without_a_distribution_is_a_run_time_error(temperature, row, what):
    from rlx_xdsl.numerics import KernelError

    logits = np.array([[0.0, 1.0, 2.0], row], np.float32)
    with pytest.raises(KernelError, match=rf"'mir\.sample' row 1 of the logits {what}: there is no distribution"):
        run(lambda b, x: b.sample(x, seed=0, temperature=temperature), logits)


SAMPLES = """
func.func @sample(%x: tensor<5x4xf32>) -> tensor<5xi64> {
  %0 = mir.sample %x top_k = 0 top_p = 1.0 temperature = 1.0 seed = 3 : (tensor<5x4xf32>) -> tensor<5xi64>
  func.return %0 : tensor<5xi64>
}
func.func @filtered(%x: tensor<5x4xf32>) -> tensor<5xi64> {
  %0 = mir.sample %x top_k = 2 top_p = 0.9 temperature = 0.7 seed = 3 : (tensor<5x4xf32>) -> tensor<5xi64>
  func.return %0 : tensor<5xi64>
}
func.func @greedy(%x: tensor<5x4xf32>) -> tensor<5xi64> {
  %0 = mir.sample %x top_k = 0 top_p = 1.0 temperature = 0.0 seed = 3 : (tensor<5x4xf32>) -> tensor<5xi64>
  func.return %0 : tensor<5xi64>
}
"""


@pytest.fixture(scope="module")
def samples():
    """The module and its IREE build (compiled once)."""
    from rlx_xdsl.backends.iree import IreeModule
    from rlx_xdsl.context import parse_module

    module = parse_module(SAMPLES)
    return module, IreeModule(module)


@pytest.mark.parametrize("name", ["sample", "filtered", "greedy"])
def test_backends_sample_infinite_rows_alike_and_give_minus_one_without_a_distribution(samples, name):
    """IREE (the linalg lowering) and XLA (the JAX formula): +inf ids as the interpreter picks
    them, and -1 for a row with a NaN or all -inf (they cannot raise at run time)."""
    from rlx_xdsl.backends.xla.module import run_function as run_on_xla

    module, iree = samples
    inf, nan = np.inf, np.nan
    logits = np.array([[0, 1, inf, -1], [nan, 0, 1, 2], [-inf] * 4, [inf, 2, inf, 1], [0.5, -1, 2, 1]], np.float32)
    finite = logits.copy()
    finite[[1, 2]] = [1, 2, 3, 4]  # rows 1 and 2 as any row: the draws of the others are unchanged
    want = run_function(module, name, [finite])[0]
    want[[1, 2]] = -1
    assert want[0] == 2 and want[3] in (0, 2)
    np.testing.assert_array_equal(iree.run(name, [logits])[0], want, err_msg="iree")
    np.testing.assert_array_equal(run_on_xla(module, name, [logits])[0], want, err_msg="xla")
