"""Walks an `ExportedProgram`'s graph and emits one MIR function.

Placeholders become the function's arguments (parameters and buffers as `rlx.param`
arguments named by their state-dict keys, user inputs by their names), a buffer the
program mutates in place (a static KV cache: `buffers_to_mutate`) a plain input named
by its key whose new value is an extra result after the user outputs, lifted
tensor constants become `mir.constant`s, hand-written idioms (`idioms.py`) become
their one MIR op (or HIR block, with `hir`), every other `call_function` node goes through the ATen table
(`table.ATEN`), and the output node becomes `func.return`. Each op is located at
the innermost frame of the node's stack trace outside PyTorch (and outside this importer).
"""

from __future__ import annotations

import linecache
import operator
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import ops as _ops  # noqa: F401  (registers the rules)
from rlx_xdsl.importers.torch.idioms import find_idioms
from rlx_xdsl.importers.torch.table import ATEN
from rlx_xdsl.importers.torch.types import DTYPES, dtype_name, to_numpy  # noqa: F401
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.support.progress import track

_TORCH_DIR = os.path.join(os.path.dirname(torch.__file__), "")  # with its separator: not torchvision's
_IMPORTER_DIR = os.path.join(os.path.dirname(__file__), "")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def user_frame(node: torch.fx.Node) -> tuple[str, int] | None:
    """The innermost `(file, line)` of `node`'s stack trace outside PyTorch itself (a
    library built on it, torchvision or transformers, is the model's source), else the
    innermost of PyTorch's (a model made of `torch.nn` modules); never this importer's."""
    trace = _FRAME.findall(node.meta.get("stack_trace") or "")
    frames = [(f, int(line)) for f, line in trace if not f.startswith(_IMPORTER_DIR)]
    outside = [frame for frame in frames if not frame[0].startswith(_TORCH_DIR)]
    return (outside or frames or [None])[-1]


def source_name(path: str) -> str:
    """`path` as a location names it: relative to the innermost of the working directory and
    the `sys.path` entries that holds it (`transformers/models/llama/modeling_llama.py`),
    else as given; so imported IR does not carry the importing machine's absolute paths."""
    # The innermost root holding `path` wins: a virtual environment inside the working
    # directory still names `torch/nn/...`, not `.venv/lib/.../torch/nn/...`.
    roots = sorted({os.getcwd(), *(p for p in sys.path if p and os.path.isabs(p))}, key=len, reverse=True)
    for root in roots:
        relative = os.path.relpath(path, root) if os.path.isabs(path) else path
        if not relative.startswith(os.pardir):
            return relative
    return path


def source_location(node: torch.fx.Node):
    """`file:line:col` of `node`'s user frame (`user_frame`): the file by `source_name`, the
    column that of the statement on that line (the trace gives no finer position); unknown
    without a stack trace."""
    frame = user_frame(node)
    if frame is None:
        return UnknownLoc()
    path, line = frame
    text = linecache.getline(path, line)
    column = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    return FileLineColLoc(StringAttr(source_name(path)), IntAttr(line), IntAttr(column))


def describe(node: torch.fx.Node) -> str:
    """Where `node` comes from, for messages: `file:line` of its source, else its name."""
    frame = user_frame(node)
    return f"{source_name(frame[0])}:{frame[1]}" if frame else f"node '{node.name}'"


class Translator:
    """The state of one import: fx nodes -> MIR values, and the graph being built."""

    def __init__(self, program: ExportedProgram, name: str, hir: bool = False):
        self.program = program
        self.hir = hir
        self.b = GraphBuilder(name)
        self.values: dict[torch.fx.Node, Any] = {}
        self.node: torch.fx.Node | None = None

    @property
    def e(self):
        """The emitter, located at the node being translated."""
        return self.b.emitter

    @property
    def where(self) -> str | None:
        return describe(self.node) if self.node is not None else None

    def fail(self, message: str) -> ImportFailure:
        target = self.node.target if self.node is not None else None
        op = f"'{target}'" if target is not None and not isinstance(target, str) else None
        return ImportFailure(f"{op}: {message}" if op else message, self.where)

    # Types ----------------------------------------------------------------------------

    def meta(self, node: Any) -> Any:
        return node.meta.get("val") if isinstance(node, torch.fx.Node) else None

    def shape(self, node: Any) -> list[int]:
        """`node`'s static shape, `?` (DYNAMIC) for symbolic dims."""
        val = self.meta(node)
        return [d if isinstance(d, int) else DYNAMIC for d in val.shape]

    def dtype(self, node: Any) -> str:
        return dtype_name(self.meta(node).dtype, self.where)

    def rank(self, node: Any) -> int:
        return len(self.meta(node).shape)

    # Operands ---------------------------------------------------------------------------

    def value(self, arg: Any, dtype: str | None = None) -> SSAValue:
        """The MIR value of a node argument (a node, or a Python number as a constant),
        cast to `dtype` when given and different."""
        if isinstance(arg, torch.fx.Node):
            value = self.values[arg]
            if not isinstance(value, SSAValue):
                raise self.fail(f"operand '{arg.name}' is not a tensor")
            if dtype is not None and self.dtype(arg) != dtype:
                return self.e.mir.cast(value, dtype)
            return value
        if isinstance(arg, bool | int | float):
            default = "i1" if isinstance(arg, bool) else "f32" if isinstance(arg, float) else "i64"
            return self.constant(np.asarray(arg), dtype or default)
        raise self.fail(f"operand {arg!r} is neither a tensor nor a number")

    def constant(self, array: np.ndarray, dtype: str) -> SSAValue:
        from rlx_xdsl.dtypes import dtype_named

        return self.e.mir.constant(np.asarray(array).astype(dtype_named(dtype).numpy), dtype)

    def ints(self, values: Sequence[Any]) -> list[int]:
        """A list of sizes: symbolic entries (SymInt nodes) become -1."""
        return [v if isinstance(v, int) else -1 for v in values]

    def sized_by(self, sizes: Sequence[Any], which: Sequence[int]) -> tuple[SSAValue, list[int]]:
        """`like` and `like_dims` (`mir.iota`, `mir.expand`) for the dynamic `sizes` at
        positions `which`: each must be `sym_size(x, d)` of one same tensor `x`, read at
        run time as `x`'s dim `d`, or a size computed from such (`2 * B * S`) that a
        translated tensor has (`record_sizes`)."""
        sources, dims = set(), [-1] * len(sizes)
        for i in which:
            size = sizes[i]
            if isinstance(size, torch.fx.Node) and size.target is torch.ops.aten.sym_size.int:
                source, dim = size.args
            else:  # computed (`2 * B * S`): a translated tensor with that dim
                found = isinstance(size, torch.fx.Node) and self.computed_sizes.get(str(self.meta(size)))
                if not found:
                    raise self.fail(f"a dynamic size computed by '{getattr(size, 'target', size)}' is not supported")
                source, dim = found
            sources.add(source)
            dims[i] = dim % self.rank(source)
        if len(sources) != 1:
            raise self.fail("dynamic sizes read from several tensors are not supported")
        return self.value(sources.pop()), dims

    def like_sizes(self, node: torch.fx.Node, which: Sequence[int] | None = None) -> tuple[SSAValue, list[int]]:
        """`like` and `like_dims` (`mir.reshape`, `mir.narrow`, `mir.expand`) for `node`'s
        dynamic result dims at positions `which` (default: all its dynamic dims): each
        must be a size of a user input (`Dim("seq")`), all of one same input, read at
        run time as that input's dim; a size computed from those (`2 * B * S`) is read
        from the first translated tensor that has it (`record_sizes`). One no tensor has
        yet is a located error."""
        shape = self.meta(node).shape
        which = [i for i, d in enumerate(shape) if not isinstance(d, int)] if which is None else which
        sources, dims = set(), [-1] * len(shape)
        for i in which:
            found = self.input_sizes.get(str(shape[i])) or self.computed_sizes.get(str(shape[i]))
            if found is None:
                raise self.fail(f"the size {shape[i]} (dim {i}) is computed from input sizes: not supported")
            sources.add(found[0])
            dims[i] = found[1]
        if len(sources) != 1:
            raise self.fail("dynamic sizes read from several tensors are not supported")
        return self.value(sources.pop()), dims

    # The walk ---------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        signature = self.program.graph_signature
        kinds = {spec.arg.name: spec for spec in signature.input_specs}
        self.state = set(signature.buffers_to_mutate.values())
        self.tied = tied_weights(self.program)
        self.weights: dict[str, SSAValue] = {}
        self.input_sizes: dict[str, tuple[torch.fx.Node, int]] = {}
        self.computed_sizes: dict[str, tuple[torch.fx.Node, int]] = {}
        idioms = find_idioms(self.program.graph, self.hir)
        inside = {node for idiom in idioms.values() for node in idiom.inner}
        nodes = self.program.graph.nodes
        for node in track(nodes, "translating the ATen graph to MIR", total=len(nodes)):
            self.node = node
            self.b.emitter.location = self.location(node)
            if node.op == "placeholder":
                self.placeholder(node, kinds[node.name])
            elif node in idioms:
                self.values[node] = idioms[node].emit(self, self.hir)
            elif node in inside:
                continue  # computed by the idiom's one op
            elif node.op == "call_function":
                self.values[node] = self.call(node)
                self.record_sizes(node)
            elif node.op == "output":
                self.b.output(*(self.value(v) for v in self.outputs(node)))
        self.node = None
        module = self.b.module()
        module.verify()
        return module

    def record_sizes(self, node: torch.fx.Node) -> None:
        """Note `node`'s computed symbolic dims (`2 * B * S`, not input sizes) that no earlier
        tensor has, for `like_sizes` to read at run time from `node`'s value."""
        val = self.meta(node)
        if isinstance(val, torch.Tensor) and isinstance(self.values.get(node), SSAValue):
            for d, size in enumerate(val.shape):
                if not isinstance(size, int) and str(size) not in self.input_sizes:
                    self.computed_sizes.setdefault(str(size), (node, d))

    def location(self, node: torch.fx.Node):
        return source_location(node)

    def placeholder(self, node: torch.fx.Node, spec) -> None:
        val = self.meta(node)
        if not isinstance(val, torch.Tensor):
            raise self.fail(f"input '{node.name}' is not a tensor ({type(val).__name__})")
        shape, dtype = self.shape(node), self.dtype(node)
        if spec.kind == InputKind.BUFFER and spec.target in self.state:
            self.values[node] = self.b.input(spec.target, shape, dtype)  # state the caller threads through
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            first = self.tied.get(spec.target)
            if first is not None:  # a tied weight is one argument: its gradient sums both uses
                self.values[node] = self.weights[first]
            else:
                self.values[node] = self.weights[spec.target] = self.b.param(spec.target, shape, dtype)
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            array = to_numpy(self.program.constants[spec.target])
            self.values[node] = self.constant(array, dtype)
        elif spec.kind == InputKind.USER_INPUT:
            self.values[node] = self.b.input(node.name, shape, dtype)
            for d, size in enumerate(val.shape):  # the symbols a `Dim` names, by their first input dim
                if not isinstance(size, int):
                    self.input_sizes.setdefault(str(size), (node, d))
        else:
            raise self.fail(f"input '{node.name}' of kind {spec.kind.name} is not supported")

    def outputs(self, node: torch.fx.Node) -> list[torch.fx.Node]:
        """The user outputs, then the new values of the mutated buffers and user inputs in
        their arguments' order (torch lists the mutations first)."""
        signature = self.program.graph_signature
        mutation = (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION)
        pairs = list(zip(signature.output_specs, node.args[0], strict=True))
        updated = {spec.target: out for spec, out in pairs if spec.kind in mutation}
        inputs = [spec.target if spec.kind == InputKind.BUFFER else spec.arg.name for spec in signature.input_specs]
        outs = [out for spec, out in pairs if spec.kind not in mutation]
        outs += [updated[name] for name in inputs if name in updated]  # in the arguments' order
        for out in outs:
            if not isinstance(out, torch.fx.Node) or not isinstance(self.values.get(out), SSAValue):
                raise ImportFailure(f"output {out!r} is not a tensor", self.where)
        return outs

    def call(self, node: torch.fx.Node) -> Any:
        if node.target is operator.getitem:
            return self.getitem(node)
        if isinstance(self.meta(node), torch.SymInt | int):
            return None  # a size (`sym_size`): rules read sizes from the nodes' shapes
        rule = ATEN.get(node.target) or ATEN.get(str(node.target))
        if rule is None:
            raise ImportFailure(f"unsupported ATen op '{node.target}' (node '{node.name}')", self.where)
        try:
            return rule(self, node)
        except (VerifyException, ValueError) as e:
            raise self.fail(f"cannot be expressed in MIR: {e}") from None
        except (TypeError, IndexError, KeyError, AttributeError) as e:  # arguments the rule did not expect
            raise self.fail(f"arguments not supported ({type(e).__name__}: {e})") from None

    def getitem(self, node: torch.fx.Node) -> SSAValue:
        source, index = node.args
        value = self.values[source][index]
        if value is None:
            raise self.fail(f"output {index} of '{source.target}' is not supported")
        return value


def tied_weights(program: ExportedProgram) -> dict[str, str]:
    """State-dict keys naming the same tensor as an earlier key (GPT-2's `lm_head.weight`
    is `wte.weight`), each to that first key."""
    first: dict[int, str] = {}
    tied = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER) and spec.target in program.state_dict:
            key = id(program.state_dict[spec.target])
            if key in first:
                tied[spec.target] = first[key]
            else:
                first[key] = spec.target
    return tied


def translate(program: ExportedProgram, name: str = "forward", hir: bool = False) -> ModuleOp:
    return Translator(program, name, hir).run()
