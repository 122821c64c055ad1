"""Walks an ONNX graph and emits one MIR function.

Graph inputs become the function's inputs (`?` for symbolic or unknown dims),
initializers become `rlx.param` arguments named by the initializer (created where
first used as a tensor; an initializer read only as a shape or an axis list stays a
compile-time value), `Constant` nodes become `mir.constant`s, and each node goes
through `table.ONNX_OPS`, located at `NameLoc(node name)`. A node whose inputs are all
compile-time values (shape arithmetic: `Shape -> Gather -> Concat -> Reshape`) is evaluated
at import time by ONNX's reference evaluator instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, UnknownLoc
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dtypes import dtype_named
from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.onnx import ops as _ops  # noqa: F401  (registers the rules)
from rlx_xdsl.importers.onnx.table import FOLLOWED_SINCE, ONNX_OPS
from rlx_xdsl.importers.onnx.types import DTYPES, OPSETS, RULE_OPSETS, P, dtype_name  # noqa: F401
from rlx_xdsl.shapes import DYNAMIC


def node_label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


class Translator:
    """The state of one import: ONNX names -> MIR values and compile-time arrays."""

    def __init__(self, model: onnx.ModelProto, name: str, bind: dict[str, np.ndarray] | None = None):
        self.model = model
        self.bind = dict(bind or {})
        self.opset = self._opset()
        self.graph = self.model.graph
        self.b = GraphBuilder(name)
        self.values: dict[str, SSAValue] = {}
        self.consts: dict[str, np.ndarray] = {}
        """Compile-time values: initializers and `Constant` outputs."""
        self.initializers = {i.name: i for i in self.graph.initializer}
        self.node: onnx.NodeProto | None = None
        self.where: str | None = None

    def _opset(self) -> int:
        versions = [o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")]
        if not versions:
            raise ImportFailure("the model imports no default-domain opset")
        version = versions[0]
        if version not in OPSETS:
            raise ImportFailure(f"opset {version} is not supported (supported: {OPSETS.start}-{OPSETS.stop - 1})")
        if version < RULE_OPSETS.start:
            self.model = _converted(self.model, version, RULE_OPSETS.start)
            return RULE_OPSETS.start
        return version

    @property
    def e(self):
        return self.b.emitter

    def fail(self, message: str) -> ImportFailure:
        return ImportFailure(message, self.where)

    # Reading the node ---------------------------------------------------------------

    def attr(self, name: str, default: Any = None) -> Any:
        for a in self.node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    def input(self, index: int) -> str | None:
        """The name of input `index`, None when absent (optional and left empty)."""
        inputs = self.node.input
        return inputs[index] if index < len(inputs) and inputs[index] else None

    def value(self, index_or_name: int | str, dtype: str | None = None) -> SSAValue:
        """The MIR value of an input (by position in the node, or by name)."""
        name = self.input(index_or_name) if isinstance(index_or_name, int) else index_or_name
        if name is None:
            raise self.fail(f"input {index_or_name} is missing")
        if name not in self.values:
            if name in self.initializers:
                array = self.consts[name]
                self.values[name] = self.b.param(name, array.shape, self._dtype_of_array(array))
            elif name in self.consts:  # a Constant's output, emitted where first used as a tensor
                self.values[name] = self.constant(self.consts[name], self._dtype_of_array(self.consts[name]))
            else:
                raise self.fail(f"input '{name}' is not defined before its use")
        value = self.values[name]
        if dtype is not None and self.dtype(value) != dtype:
            return self.e.mir.cast(value, dtype)
        return value

    def static(self, index: int, what: str) -> np.ndarray | None:
        """Input `index` as a compile-time array (None when absent)."""
        name = self.input(index)
        if name is None:
            return None
        if name not in self.consts:
            failure = self.fail(f"{what} (input {index}) must be a constant or an initializer")
            failure.needs_constant = name
            raise failure
        return self.consts[name]

    def shape(self, value: SSAValue) -> list[int]:
        return list(value.type.get_shape())

    def rank(self, value: SSAValue) -> int:
        return len(value.type.get_shape())

    def dtype(self, value: SSAValue) -> str:
        from rlx_xdsl.dtypes import dtype_of

        return dtype_of(value.type.element_type).name

    def constant(self, array: Any, dtype: str) -> SSAValue:
        return self.e.mir.constant(np.asarray(array).astype(dtype_named(dtype).numpy), dtype)

    def _dtype_of_array(self, array: np.ndarray) -> str:
        from rlx_xdsl.dtypes import dtype_of_numpy

        try:
            return dtype_of_numpy(array.dtype).name
        except Exception:
            raise self.fail(f"element type {array.dtype} has no MIR equivalent") from None

    # The walk ------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        for init in self.graph.initializer:
            try:
                self.consts[init.name] = numpy_helper.to_array(init)
            except Exception as e:
                raise ImportFailure(f"initializer '{init.name}' cannot be read: {e}") from None
        unknown = sorted(set(self.bind) - {i.name for i in self.graph.input})
        if unknown:
            raise ImportFailure(f"cannot bind '{unknown[0]}': the graph has no such input")
        for name, array in self.bind.items():
            self.consts[name] = np.asarray(array)
        for graph_input in self.graph.input:
            if graph_input.name in self.bind:
                continue
            if graph_input.name not in self.initializers:
                self.values[graph_input.name] = self.b.input(graph_input.name, *self._tensor_type(graph_input))
        for index, node in enumerate(self.graph.node):
            self.node = node
            label = node_label(node, index)
            self.where = f"node '{label}' ({node.op_type})"
            self.e.location = NameLoc(StringAttr(label), NoneAttr())
            self._translate(node)
        self.node, self.where = None, None
        self.e.location = UnknownLoc()
        outputs = []
        for out in self.graph.output:
            if out.name not in self.values and out.name not in self.consts:
                raise ImportFailure(f"graph output '{out.name}' is never computed")
            outputs.append(self.value(out.name))
        self.b.output(*outputs)
        module = self.b.module()
        try:
            module.verify()
        except VerifyException as e:
            raise ImportFailure(f"the imported module does not verify: {e}") from None
        return module

    def _tensor_type(self, info: onnx.ValueInfoProto) -> tuple[list[int], str]:
        self.where = f"graph input '{info.name}'"
        if not info.type.HasField("tensor_type"):
            raise self.fail("only tensor inputs are supported")
        tensor_type = info.type.tensor_type
        if not tensor_type.HasField("shape"):
            raise self.fail("an input of unknown rank is not supported")
        dims = [d.dim_value if d.HasField("dim_value") else DYNAMIC for d in tensor_type.shape.dim]
        return dims, dtype_name(tensor_type.elem_type, self.where)

    def _translate(self, node: onnx.NodeProto) -> None:
        if node.domain not in ("", "ai.onnx"):
            raise self.fail(f"op '{node.domain}.{node.op_type}' of a custom domain is not supported")
        if node.op_type == "Constant":
            self._constant(node)
            return
        if self._foldable(node):
            for name, array in zip(node.output, self._fold(node)):
                self.consts[name] = array
            return
        rule = ONNX_OPS.get(node.op_type)
        if rule is None:
            raise self.fail(f"unsupported ONNX op '{node.op_type}'")
        self._check_schema(node)
        try:
            results = rule(self, node)
        except (VerifyException, ValueError) as e:
            raise self.fail(f"cannot be expressed in MIR: {e}") from None
        except (TypeError, IndexError, KeyError, AttributeError) as e:  # a missing attribute or input
            raise self.fail(f"malformed {node.op_type} node ({type(e).__name__}: {e})") from None
        results = list(results) if isinstance(results, list | tuple) else [results]
        for name, result in zip(node.output, results):
            if name and isinstance(result, np.ndarray):
                self.consts[name] = result  # folded at import time (e.g. Shape of a static tensor)
            elif name and result is not None:
                self.values[name] = result
        for name, result in zip(node.output, results):
            if name and result is None and self._used(name):
                raise self.fail(f"output '{name}' is not supported")

    def _check_schema(self, node: onnx.NodeProto) -> None:
        """In a model newer than the rules' opsets, refuse a node using what its op gained since:
        a new attribute set to other than its default, a new optional input given. (Element
        types an op gained need no check: MIR's types are checked where values are made.)"""
        newest = RULE_OPSETS.stop - 1
        if self.opset <= newest:
            return
        new = onnx.defs.get_schema(node.op_type, self.opset, "")
        if new.since_version > newest and not onnx.defs.has(node.op_type, newest, ""):
            return  # an op newer than the rules' opsets: its rule follows its first version
        old = onnx.defs.get_schema(node.op_type, newest, "")
        if new.since_version == old.since_version:
            return
        rules = f"{RULE_OPSETS.start}-{newest}"
        since = f"(new in opset {new.since_version}, after the opsets {rules} the importer follows)"
        followed = FOLLOWED_SINCE.get(node.op_type, frozenset())
        for a in node.attribute:
            declared = new.attributes.get(a.name)
            if a.name not in old.attributes and a.name not in followed and declared is not None and a != declared.default_value:
                raise self.fail(f"attribute '{a.name}' {since} is not supported")
        names = [i.name for i in old.inputs]
        if [i.name for i in new.inputs[: len(names)]] != names:
            raise self.fail(f"the inputs of {node.op_type} {since} are not supported")
        for index, declared in enumerate(new.inputs[len(names) :], len(names)):
            if self.input(index) and declared.name not in followed:
                raise self.fail(f"input '{declared.name}' {since} is not supported")

    def _foldable(self, node: onnx.NodeProto) -> bool:
        """Shape arithmetic: every input a compile-time value, none of them a float weight
        (weights stay parameters, so a transposed weight is not baked into the IR)."""
        names = [n for n in node.input if n]
        return bool(names) and all(
            n in self.consts and not (n in self.initializers and self.consts[n].dtype.kind == "f") for n in names
        )

    def _fold(self, node: onnx.NodeProto) -> list[np.ndarray]:
        """Evaluate one node on compile-time inputs with ONNX's reference evaluator."""
        from onnx.reference import ReferenceEvaluator

        inputs = [n for n in node.input if n]
        graph = helper.make_graph(
            [node],
            "fold",
            [_value_info(n, self.consts[n]) for n in inputs],
            [helper.make_tensor_value_info(n, P.UNDEFINED, None) for n in node.output if n],
        )
        model = helper.make_model(graph, opset_imports=list(self.model.opset_import))
        try:
            results = ReferenceEvaluator(model).run(None, {n: self.consts[n] for n in inputs})
        except Exception as e:
            raise self.fail(f"cannot evaluate on constant inputs: {type(e).__name__}: {e}") from None
        return [np.asarray(r) for r in results]

    def _used(self, name: str) -> bool:
        return any(name in n.input for n in self.graph.node) or any(o.name == name for o in self.graph.output)

    def _constant(self, node: onnx.NodeProto) -> None:
        attribute = node.attribute[0] if len(node.attribute) == 1 else None
        if attribute is None:
            raise self.fail("a Constant needs exactly one attribute")
        value = helper.get_attribute_value(attribute)
        if isinstance(value, onnx.TensorProto):
            array = numpy_helper.to_array(value)
        elif attribute.name in ("value_float", "value_int"):
            array = np.asarray(value, dtype=np.float32 if attribute.name == "value_float" else np.int64)
        elif attribute.name in ("value_floats", "value_ints"):
            array = np.asarray(value, dtype=np.float32 if attribute.name == "value_floats" else np.int64)
        else:
            raise self.fail(f"a Constant with '{attribute.name}' is not supported")
        self._dtype_of_array(array)
        self.consts[node.output[0]] = array


def _converted(model: onnx.ModelProto, version: int, target: int) -> onnx.ModelProto:
    """`model` of opset `version` converted to opset `target` by `onnx.version_converter`;
    a node whose op has no definition at `version` is refused first, located at the node."""
    from onnx import version_converter

    for index, node in enumerate(model.graph.node):
        if node.domain in ("", "ai.onnx") and not onnx.defs.has(node.op_type, version, ""):
            where = f"node '{node_label(node, index)}' ({node.op_type})"
            raise ImportFailure(f"op '{node.op_type}' is not defined at opset {version}", where)
    try:
        return version_converter.convert_version(model, target)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ImportFailure(f"converting the model from opset {version} to {target} failed: {first}") from None


def _value_info(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), None)


def translate(model: onnx.ModelProto, name: str = "main", bind: dict[str, np.ndarray] | None = None) -> ModuleOp:
    return Translator(model, name, bind).run()
