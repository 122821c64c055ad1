"""Class-keyed registries: the helper itself, coverage of every registry, third-party entries."""

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl import layers
from rlx_xdsl.autodiff.prepare import prepare_rewrites
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.autodiff.rules.mir import pending
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.conversions.hir_to_mir import LOWERINGS
from rlx_xdsl.conversions.mir_to_jax import JAX_OPS
from rlx_xdsl.conversions.mir_to_linalg import LOWERINGS as LINALG_LOWERINGS
from rlx_xdsl.dialects import hir, lir
from rlx_xdsl.dialects.base import RlxOperation, tensor_type
from rlx_xdsl.dialects.mir import ALL_OPS, backward, fused, fused_regions
from rlx_xdsl.dialects.mir.elementwise import AddOp, SubOp
from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyBackwardOp
from rlx_xdsl.interpreters import KERNELS, YIELDS
from rlx_xdsl.registry import MissingEntry, OpRegistry
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import RECIPES
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES

for _layer in layers.LAYERS:
    layers.load(_layer)
VJP_PENDING = pending()

# Every registry and the ops it must cover. Issues that add a registry add a row.
COVERAGE = [
    ("interpreter kernels", KERNELS, [op for op in ALL_OPS if op not in YIELDS]),
    ("linalg lowerings", LINALG_LOWERINGS, [op for op in ALL_OPS if op not in YIELDS] + lir.ALL_OPS),
    ("unfuse rules", UNFUSE_RULES, fused.OPS + fused_regions.OPS),
    ("HIR interpreter kernels", KERNELS, hir.ALL_OPS),
    ("jax formulas (StableHLO export, autodiff oracle)", JAX_OPS, ALL_OPS),
    ("HIR lowerings", LOWERINGS, hir.ALL_OPS),
    ("HIR graphgen recipes", RECIPES, hir.ALL_OPS),
    (
        "backward decompositions",
        DECOMPOSITIONS,
        [op for op in backward.OPS if op is not backward.StopGradientOp] + [SoftmaxCrossEntropyBackwardOp],
    ),
    ("batching rules (or a registered reason)", BATCH_RULES, ALL_OPS),
    (
        "VJP rules (ops rlx-prepare-ad keeps, but known gaps)",
        VJP_RULES,
        [op for op in ALL_OPS if op not in YIELDS and not prepare_rewrites(op) and op not in VJP_PENDING],
    ),
]


@pytest.mark.parametrize(("layer", "group"), [(layer, g) for layer, (_, groups) in layers.LAYERS.items() for g in groups])
def test_every_layer_has_a_module_for_every_group_of_its_dialect(layer, group):
    """One list of groups (`layers.MIR_GROUPS`, `layers.HIR_GROUPS`) and every layer follows it:
    adding a group without its module in a layer fails here, unless `layers.NO_MODULE` says why."""
    package, _ = layers.LAYERS[layer]
    loaded = {module.__name__ for module in layers.load(layer)}
    assert (f"{package}.{group}" in loaded) != ((layer, group) in layers.NO_MODULE)


@pytest.mark.parametrize(("what", "registry", "ops"), COVERAGE, ids=[row[0] for row in COVERAGE])
def test_every_registry_covers_its_ops(what, registry, ops):
    assert registry.missing(ops) == []


def test_lookup_is_by_class_and_reports_missing_entries():
    registry: OpRegistry[str] = OpRegistry("test entry")
    registry.register(AddOp)("add")
    assert registry[AddOp] == "add" and AddOp in registry
    assert registry.lookup(SubOp) is None
    with pytest.raises(MissingEntry, match="no test entry for 'mir.sub'"):
        registry[SubOp]
    assert registry.missing([AddOp, SubOp]) == ["mir.sub"]


def test_registering_a_class_twice_is_refused():
    registry: OpRegistry[str] = OpRegistry("test entry")
    registry.add(AddOp, "a")
    with pytest.raises(ValueError, match="'mir.add' already has a test entry"):
        registry.add(AddOp, "b")


@irdl_op_definition
class DoubleOp(RlxOperation):
    """A third-party op: `2 * x`."""

    name = "thirdparty.double"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


def test_a_third_party_op_runs_once_its_kernel_is_registered():
    b = GraphBuilder("f")
    x = b.input("x", [3])
    b.output(b.emit(DoubleOp(x)))
    module = b.module()
    data = np.array([1.0, -2.0, 0.5], np.float32)
    with pytest.raises(Exception, match="thirdparty.double"):
        run_function(module, "f", [data])
    KERNELS.add(DoubleOp, lambda op, x: (x * 2,))
    try:
        (out,) = run_function(module, "f", [data])
        np.testing.assert_array_equal(out, data * 2)
    finally:
        KERNELS.remove(DoubleOp)
