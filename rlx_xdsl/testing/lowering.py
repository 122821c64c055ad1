"""Lowering MIR for tests: every lowered module must read back as `rlx-opt` writes it.

`lowered(module)` lowers in place (`rlx-convert-mir-to-linalg`) and then checks, in
both syntaxes, that the text `rlx-opt` prints parses and verifies again and prints the
same. A printer/parser mismatch (an attribute that prints in a form the parser stores
differently, an op whose custom syntax does not read back) then fails the test that
lowered it, not a user's second `rlx-opt` call.

Random graphs are lowered in batches (`merged`: many graphs, one module), since each
compile of a lowered module (`iree-compile`, `mlir-opt`) costs a start-up.
"""

from __future__ import annotations

from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from rlx_xdsl import layers
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.conversions.mir_to_linalg import lower_module
from rlx_xdsl.conversions.mir_to_linalg.lowering import UNLOWERABLE
from rlx_xdsl.dialects.mir import ALL_OPS
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.testing.graphgen import RECIPES, graphs


def assert_reads_back(module: ModuleOp) -> None:
    """`module`'s text (custom and generic) parses, verifies and prints the same again."""
    ctx = make_context()
    for generic in (False, True):
        text = print_ir(module, print_generic_format=generic)
        again, _ = parse_source(ctx, text, "lowered.mlir")  # verifies, as rlx-opt does
        assert print_ir(again, print_generic_format=generic) == text


def lowered(module: ModuleOp) -> ModuleOp:
    """`module`, lowered to upstream MLIR in place, once its text is known to read back."""
    lower_module(module)
    assert_reads_back(module)
    return module


def lowerable_ops() -> list:
    """The MIR ops with an upstream form (not in `UNLOWERABLE`: splatting runs in the
    interpreter only), which random graphs for the lowering draw from."""
    layers.load("linalg")
    return [op for op in ALL_OPS if op in RECIPES and op not in UNLOWERABLE]


@st.composite
def graph_text(draw) -> str:
    """A random graph of lowerable ops as text: Hypothesis prints a failing example, and text
    prints fast (a `.map(str)` would make it print the module object, which takes minutes)."""
    return str(draw(graphs(max_ops=10, ops=lowerable_ops())))


def merged(texts: list[str]) -> ModuleOp:
    """The functions of the modules in `texts` in one module, renamed `@g0, @g1, ...`."""
    functions = []
    for index, text in enumerate(texts):
        f = parse_module(text).ops.first.clone()
        assert isinstance(f, func.FuncOp)
        f.sym_name = StringAttr(f"g{index}")
        functions.append(f)
    return ModuleOp(functions)
