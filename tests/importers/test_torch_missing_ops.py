"""The ATen ops the models of issue 35 stopped at (Mixtral's sort, Swin's fmod, Wav2Vec2's
weight norm, ConvNeXt's as_strided, SqueezeNet's ceil-mode pooling, exact GELU's erf,
`a // b`; Mixtral's expert routing with a dynamic batch and sequence: sort along a `?` dim,
histc, grouped_mm, the inverse permutation by `index_put`), imported and run by the
interpreter against PyTorch's own output."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.export import Dim

from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import import_module
from rlx_xdsl.importers.torch.types import to_numpy
from rlx_xdsl.run import run_function


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def expect_same(fn, *inputs, rtol=1e-6, atol=0.0):
    """Import `fn` (a function of the inputs), run it, and compare with PyTorch, NaN and
    the sign of zero included; integer results exactly."""
    model = Fn(fn)
    module = import_module(model, tuple(inputs))
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_function(module, None, [x.numpy() for x in inputs])
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.numpy()
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(e))
    return module


def expect_same_at_sizes(fn, dims, *input_sets, rtol=1e-6):
    """Import `fn` once from the first inputs with `dims` (per input, `{dim: Dim}`) dynamic,
    and run every input set against PyTorch as `expect_same` does."""
    model = Fn(fn)
    module = import_module(model, tuple(input_sets[0]), dynamic_shapes={"xs": tuple(dims)})
    for inputs in input_sets:
        with torch.no_grad():
            expected = model(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = run_function(module, None, [x.numpy() for x in inputs])
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape and g.dtype == e.numpy().dtype
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(e.numpy()))
    return module


def ops(module) -> set[str]:
    return {op.name for op in module.walk()}


# erf ---------------------------------------------------------------------------------------


def test_erf_and_exact_gelu_written_with_it():
    x = torch.tensor([0.0, -0.0, 1e-8, -0.4, 1.3, -2.5, 5.0, float("inf"), float("-inf"), float("nan")])
    module = expect_same(lambda x: (torch.erf(x), 0.5 * x * (1 + torch.erf(x / 2**0.5))), x)
    assert "mir.erf" in ops(module)


# division with rounding, fmod -------------------------------------------------------------

A = torch.tensor([7.0, -7.0, 7.5, -7.5, 1.0, -1.0, 0.0, -0.0, 5.0, float("inf"), 3.0, -4.0, 1e6, 2.0])
B = torch.tensor([2.0, 2.0, -2.0, -2.0, 0.1, 0.1, 3.0, 3.0, 0.0, 2.0, float("inf"), 2.0, 3e-3, -float("inf")])
IA = torch.tensor([7, -7, 7, -7, 0, 6, -6, 2**31 - 1], dtype=torch.int32)
IB = torch.tensor([2, 2, -2, -2, 3, -3, -3, 7], dtype=torch.int32)


@pytest.mark.parametrize("mode", ["floor", "trunc", None])
def test_div_with_rounding_mode_matches_torch(mode):
    """`1 // 0.1` is 9 (torch and Python), where `floor(1 / 0.1)` is 10; x // 0 is inf."""
    expect_same(lambda a, b: torch.div(a, b, rounding_mode=mode), A, B)
    if mode is not None:
        expect_same(lambda a, b: torch.div(a, b, rounding_mode=mode), IA, IB)


def test_floor_division_operator_and_scalars():
    expect_same(lambda a, b: (a // b, a // 3, torch.div(a, -2.5, rounding_mode="floor")), A, B)
    expect_same(lambda a, b: a // b, IA, IB)


def test_fmod_matches_torch():
    """The sign of `a`, -0.0 kept, NaN for b = 0 or a = inf, `a` for b = inf; exact for
    quotients where `a - b * trunc(a / b)` in f32 would lose the remainder (1 fmod 0.1)."""
    expect_same(torch.fmod, A, B)
    expect_same(lambda a: torch.fmod(a, 2.5), A)
    expect_same(torch.fmod, IA, IB)
    x = torch.linspace(-10, 10, 41)
    expect_same(lambda x: torch.fmod(x, 0.7), x)


# vector norms ------------------------------------------------------------------------------


ORDERS = [1, 2, float("inf"), float("-inf"), 0, 3, 0.5]


def test_vector_norm_orders_and_dims():
    x = torch.randn(3, 4, 5)
    x[0, 0, 0] = 0.0
    norm = torch.linalg.vector_norm
    expect_same(
        lambda x: tuple(norm(x, ord=p) for p in ORDERS) + tuple(norm(x, p, (0, 2), True) for p in ORDERS), x, rtol=2e-6
    )


def test_weight_norm_of_a_convolution():
    """Wav2Vec2's positional convolution: `w = g * v / ||v||` over every dim but one."""
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 4, 3, padding=1), dim=2)
    module = import_module(conv, (torch.randn(2, 4, 6),))
    x = torch.randn(2, 4, 6)
    f = module.body.block.first_op
    names = [f.arg_attrs.data[i].data.get("rlx.name") for i in range(len(f.args))] if f.arg_attrs else []
    state = {k: v.detach().numpy() for k, v in conv.state_dict().items()}
    args = [state[n.data] if n is not None and n.data in state else x.numpy() for n in names]
    with torch.no_grad():
        np.testing.assert_allclose(run_function(module, None, args)[0], conv(x).numpy(), rtol=1e-5, atol=1e-6)


# sort --------------------------------------------------------------------------------------


def _sorts(x):
    """Every direction and axis, values and indices, and argsort."""
    found = ()
    for dim in (-1, 0):
        for descending in (False, True):
            found += torch.sort(x, dim=dim, descending=descending, stable=True)
            found += (torch.argsort(x, dim=dim, descending=descending, stable=True),)
    return found


def test_stable_sort_and_argsort_match_torch():
    """Ties keep their order, NaN sorts as the largest; ints sort without negation."""
    expect_same(_sorts, torch.tensor([[3.0, 1.0, float("nan"), 1.0, -0.0], [2.0, 2.0, -1.0, 0.0, float("inf")]]))
    expect_same(_sorts, torch.tensor([[5, -(2**31), 5, 2**31 - 1, 0], [1, 1, 1, -1, -1]], dtype=torch.int32))


def test_mixtral_routing_sort_of_expert_ids():
    """`torch.sort` of top-k expert ids (Mixtral's default routing), default overload."""
    logits = torch.randn(6, 8)

    def route(logits):
        weights, experts = torch.topk(torch.softmax(logits, dim=-1), 2)
        order, index = torch.sort(experts.flatten())
        return weights, order, index

    expect_same(route, logits)


def test_sort_along_a_dynamic_dim_matches_torch():
    """A `?` axis sorts by counting (no `mir.topk`, whose k is static): ties in order, NaN
    largest, -0.0 kept, both directions, along the last dim and (transposed) the first."""
    n = Dim("n", min=2, max=64)
    floats = torch.tensor([[3.0, 1.0, float("nan"), 1.0, -0.0], [2.0, 2.0, -1.0, 0.0, float("inf")]])
    wider = torch.tensor([[0.0, -0.0, 5.0, float("nan"), -float("inf"), 5.0, 2.0], [1.0] * 7])
    expect_same_at_sizes(_sorts, [{1: n}], (floats,), (wider,))
    ints = torch.tensor([[5, -(2**31), 5, 2**31 - 1, 0], [1, 1, 1, -1, -1]], dtype=torch.int32)
    expect_same_at_sizes(_sorts, [{1: n}], (ints,), (ints[:, :3],))


def test_mixtral_routing_with_a_dynamic_token_count():
    """Mixtral's default routing (`transformers`' `grouped_mm_experts_forward`) over a `?`
    number of tokens: the sort of the expert ids, `histc` of them, the inverse permutation
    written by `index_put` into `empty_like` (its size `2 * T`, read from a tensor of that
    size), and the `arange` of it."""

    def route(logits):
        _, experts = torch.topk(torch.softmax(logits, dim=-1), 2)
        ids, perm = torch.sort(experts.flatten(), stable=True)  # the model's default sort: ties in any order
        counts = torch.histc(ids.float(), bins=4, min=0, max=3)
        inverse = torch.empty_like(perm)
        inverse[perm] = torch.arange(perm.size(0))
        return ids, perm, counts, torch.cumsum(counts, 0, dtype=torch.int32), inverse

    torch.manual_seed(3)
    expect_same_at_sizes(route, [{0: Dim("t", min=2, max=64)}], (torch.randn(6, 4),), (torch.randn(11, 4),))


def test_index_put_along_a_dynamic_dim():
    """`x[:, idx] = v` and `x[idx] += v` on a `?` dim: negative indices count from the end,
    a repeated index accumulates, other positions keep `x`."""

    def put(x, v):
        y, z = x.clone(), x[0].clone()
        y[:, torch.tensor([0, -1, 2])] = v[:, :3]
        z.index_put_((torch.tensor([0, -1, 2, -1]),), v[0], accumulate=True)
        return y, z

    n = Dim("n", min=3, max=64)
    expect_same_at_sizes(put, [{1: n}, {}], (torch.randn(2, 5), torch.randn(2, 4)), (torch.randn(2, 9), torch.randn(2, 4)))


def test_empty_like_is_zeros_at_a_dynamic_size():
    """PyTorch leaves `empty_like`'s elements undefined; the import makes them zeros."""
    module = import_module(Fn(torch.empty_like), (torch.randn(2, 3),), dynamic_shapes={"xs": ({0: Dim("b")},)})
    (got,) = run_function(module, None, [np.ones((5, 3), np.float32)])
    np.testing.assert_array_equal(got, np.zeros((5, 3), np.float32))


# histc -------------------------------------------------------------------------------------


def test_histc_matches_torch_at_the_edges():
    """Values on bin edges (`min` in the first bin, `max` in the last), just below an edge,
    outside the range and NaN (not counted); any input shape; f64 too."""
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0], [3.0, -0.5, 3.5, 0.75], [1.5, 2.25, 2.2499998, float("nan")]])
    expect_same(lambda x: (torch.histc(x, 4, 0, 3), torch.histc(x, 3, -1.0, 2.5)), x)
    expect_same(lambda x: torch.histc(x, 7, 0.1, 2.9), x.double())


def test_histc_with_min_equal_to_max_uses_the_data_range():
    """min == max: the run-time minimum and maximum of the data, widened by one on each
    side when the data is one value."""
    histograms = lambda x: (torch.histc(x, 3, 0, 0), torch.histc(x, 5, 1, 1))
    expect_same_at_sizes(histograms, [{0: Dim("n", min=2, max=64)}], (torch.tensor([2.0, 5.0, 3.0]),), (torch.tensor([2.0, 2.0]),))


# grouped_mm --------------------------------------------------------------------------------


def _grouped_reference(x, w, offs):
    """Rows `offs[e-1]:offs[e]` of x times w[e]; rows from offs[-1] on zero."""
    out, start = np.zeros((x.shape[0], w.shape[2]), np.float32), 0
    for e, end in enumerate(offs):
        out[start:end] = x[start:end] @ w[e]
        start = end
    return out


def test_grouped_mm_with_offsets_against_a_loop_over_groups():
    """`transformers`' CPU fallback (f32) and `torch._grouped_mm` (bf16, the only dtype its
    export takes), with a `?` row count: an empty group, rows past the last offset zeros
    (where `torch._grouped_mm` leaves them undefined)."""
    from transformers.integrations import moe  # noqa: F401 (registers the fallback op)

    torch.manual_seed(4)
    rows = Dim("rows", min=2, max=64)
    for dtype, tolerance in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):  # torch's own: bf16 only
        w = torch.randn(3, 8, 8).to(dtype)
        offs = torch.tensor([2, 2, 5] if dtype == torch.float32 else [3, 6, 6], dtype=torch.int32)

        def grouped(x, w=w, offs=offs):
            if x.dtype == torch.float32:
                return torch.ops.transformers.grouped_mm_fallback(x, w, offs)
            return torch._grouped_mm(x, w, offs=offs)

        module = import_module(Fn(grouped), (torch.randn(6, 8).to(dtype),), dynamic_shapes={"xs": ({0: rows},)})
        assert "mir.grouped_matmul" in ops(module)
        for x in (torch.randn(6, 8).to(dtype), torch.randn(9, 8).to(dtype)):
            (got,) = run_function(module, None, [to_numpy(x)])
            want = _grouped_reference(x.float().numpy(), w.float().numpy(), offs.tolist())
            np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=tolerance, atol=tolerance)


# as_strided --------------------------------------------------------------------------------


def test_as_strided_view_of_a_channels_last_tensor():
    """ConvNeXt's pooling of a channels-last tensor: the view reads the NHWC memory."""

    def pool(x):
        y = x.contiguous(memory_format=torch.channels_last) * 2
        return torch.as_strided(y, (2, 3, 20), (60, 1, 3)).mean(-1), torch.as_strided(y, (2, 3, 4, 5), (60, 1, 15, 3))

    # The mean sums 20 values in another order than torch: a few ulps of the sum's magnitude.
    module = expect_same(pool, torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(0)), atol=1e-6)
    assert "mir.gather" not in ops(module)


def test_as_strided_of_a_contiguous_tensor_with_an_offset():
    expect_same(lambda x: torch.as_strided(x + 1, (2, 3), (3, 1), 4), torch.randn(12))


def test_as_strided_that_is_not_a_view_is_a_located_error():
    with pytest.raises(ImportFailure) as info:
        import_module(Fn(lambda x: torch.as_strided(x + 1, (3, 3), (1, 1))), (torch.randn(6),))
    message = str(info.value)
    assert "aten.as_strided.default" in message and "not a dense view of a contiguous or channels-last" in message
    assert "test_torch_missing_ops.py:" in message


# max pooling -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel, stride, padding, dilation, ceil_mode",
    [(3, 2, 0, 1, True), (3, 2, 1, 1, True), (2, 2, 0, 1, True), (3, 1, 1, 2, False), (2, 3, 1, 2, True)],
)
def test_max_pool_with_ceil_mode_and_dilation(kernel, stride, padding, dilation, ceil_mode):
    """SqueezeNet's `MaxPool2d(3, 2, ceil_mode=True)` and dilated windows; NaN and -inf kept."""
    x = torch.randn(2, 3, 7, 8)
    x[0, 0, 1, 1], x[1, 2, 6, 7] = float("nan"), float("-inf")
    pool = torch.nn.MaxPool2d(kernel, stride, padding, dilation=dilation, ceil_mode=ceil_mode)
    expect_same(pool, x)
    expect_same(pool, torch.randint(-100, 100, (1, 2, 7, 8), dtype=torch.int32))
