"""Buffers a model mutates in place (a static KV cache, `buffers_to_mutate`) and greedy
generation through imported prefill and decode steps, against PyTorch and `transformers`'
own `generate` (the independent oracles)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlx_xdsl.importers.torch import export, import_program, program_state, program_weights
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.run import run_function


class Cache(torch.nn.Module):
    """A `[4, 3]` cache written at `pos` (`index_copy_`), and writes into the input's rows
    `rows` (`+=` and `=`)."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
        self.register_buffer("cache", torch.arange(12.0).reshape(4, 3), persistent=False)

    def forward(self, x, pos, rows):
        self.cache.index_copy_(0, pos, x * self.weight)
        return self.cache.sum(0), torch.index_put(x, (rows,), x, accumulate=True), torch.index_put(x, (rows,), 2 * x)


def test_a_mutated_buffer_is_an_argument_and_an_extra_result():
    model = Cache()
    x, pos, rows = torch.tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]]), torch.tensor([3, 0]), torch.tensor([1, 1])
    program = export(model, (x, pos, rows))
    module = import_program(program)
    f = find_function(module)
    names = [argument_name(f, i) for i in range(len(f.args))]
    assert names == ["weight", "cache", "x", "pos", "rows"]
    assert [is_param(f, i) for i in range(len(f.args))] == [True, False, False, False, False]
    assert list(program_weights(program)) == ["weight"]
    state = program_state(program)
    assert list(state) == ["cache"]
    np.testing.assert_array_equal(state["cache"], np.arange(12.0).reshape(4, 3))

    args = [np.array([1.0, 2.0, 3.0], np.float32), state["cache"], x.numpy(), pos.numpy(), rows.numpy()]
    total, added, written, cache = run_function(module, None, args)
    with torch.no_grad():
        expected_total, expected_added, _ = model(x, pos, rows)  # updates model.cache in place
    np.testing.assert_allclose(total, expected_total.numpy())
    np.testing.assert_allclose(added, expected_added.numpy())
    np.testing.assert_allclose(cache, model.cache.numpy())
    # a repeated index sums its slices (docs/deviations.md; PyTorch leaves the winner undefined)
    np.testing.assert_allclose(written, [x[0].numpy(), 2 * (x[0] + x[1]).numpy()])


class OnePosition(torch.nn.Module):
    """A decode step's write: one position `pos [1]` of a `[1, 2, 5, 3]` cache (`index_copy_`)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.arange(30.0).reshape(1, 2, 5, 3), persistent=False)

    def forward(self, new, pos):
        self.cache.index_copy_(2, pos, new)
        return self.cache.sum()


@pytest.mark.parametrize("at", [3, -1])
def test_writing_one_position_is_one_dynamic_update_slice(at):
    """No scatter over the cache: XLA runs the write in place on a donated cache. A negative
    position counts from the end, as `cache[:, :, [at]] = new` does."""
    model = OnePosition()
    new, pos = torch.tensor([[[[1.0, -2.0, 0.5]], [[3.0, 4.0, -1.0]]]]), torch.tensor([3])
    module = import_program(export(model, (new, pos)))
    names = [op.name for op in module.walk()]
    assert names.count("mir.dynamic_update_slice") == 1 and "mir.scatter_add" not in names
    cache = np.arange(30.0, dtype=np.float32).reshape(1, 2, 5, 3)
    total, written = run_function(module, None, [cache, new.numpy(), np.array([at])])
    expected = torch.from_numpy(cache.copy())
    expected[:, :, [at]] = new
    np.testing.assert_array_equal(written, expected.numpy())
    np.testing.assert_allclose(total, expected.sum().numpy())


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(3)
    config = LlamaConfig(
        vocab_size=48, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=32, eos_token_id=None,
    )  # fmt: skip
    return LlamaForCausalLM(config).eval().requires_grad_(False)


def test_greedy_generation_matches_transformers_generate(tiny_llama):
    from rlx_xdsl.importers.torch.kv_cache import export_steps, greedy

    prompt, new = torch.tensor([[1, 7, 30]]), 4
    expected = tiny_llama.generate(prompt, max_new_tokens=new, do_sample=False)[0, prompt.shape[1] :].tolist()
    steps = export_steps(tiny_llama, prompt, new)
    assert greedy(steps, prompt, new, "interpreter") == expected
    pytest.importorskip("jax")
    assert greedy(steps, prompt, new, "xla") == expected
