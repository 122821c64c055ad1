"""The HIR LLaMA decoder: the same graph as `testing.llama`, one block op per layer."""

from collections import Counter
from pathlib import Path

import pytest

from rlx_xdsl.context import parse_module
from rlx_xdsl.ir.graph import argument_names, find_function
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.llama_hir import (
    EXAMPLE_CONFIG,
    build_llama_hir,
    llama_hir_text,
    main,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama_hir.mlir"


def op_histogram(module) -> Counter:
    return Counter(op.name for op in find_function(module).body.block.ops if op.name != "func.return")


@pytest.mark.parametrize("vocab", [None, 12])
def test_arguments_match_the_mir_graph(vocab):
    hir_f, mir_f = (find_function(m) for m in (build_llama_hir(3, vocab=vocab), build_llama(3, vocab=vocab)))
    assert argument_names(hir_f) == argument_names(mir_f)
    assert hir_f.function_type == mir_f.function_type


def test_one_block_per_layer_and_a_labelled_head():
    module = build_llama_hir(3, vocab=12)
    assert op_histogram(module) == Counter({"hir.llama_decoder_block": 3, "hir.rms_norm": 1, "hir.linear": 1})
    labels = [op.block_label() for op in find_function(module).body.block.ops if op.name.startswith("hir.")]
    assert labels == ["layers.0", "layers.1", "layers.2", "norm", "lm_head"]


def test_dimensions_that_do_not_divide_are_refused():
    with pytest.raises(ValueError, match="do not divide"):
        build_llama_hir(1, dim=30, n_heads=4)


def test_shipped_example_is_the_generator_output(tmp_path):
    shipped = EXAMPLE.read_text()
    assert shipped == llama_hir_text(2, **EXAMPLE_CONFIG), "regenerate with the command in the file's header"
    command = shipped.splitlines()[1].split("python -m rlx_xdsl.testing.llama_hir ", 1)[1].split()
    main([*command, "-o", str(tmp_path / "out.mlir")])
    assert (tmp_path / "out.mlir").read_text() == shipped
    module = parse_module(shipped)
    module.verify()
    assert op_histogram(module) == Counter({"hir.llama_decoder_block": 2})
