"""RLX graph conventions on top of `func.func`.

A graph is a `func.func` in a `builtin.module`. Arguments are the graph's
inputs and parameters: a parameter carries the unit argument attribute
`rlx.param`, and any argument may carry `rlx.name = "..."`; without it the
name is positional (`arg0`, `arg1`, ...). Outputs are the `func.return` operands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.traits import SymbolTable

from rlx_xdsl import dtypes
from rlx_xdsl.shapes import is_static

if TYPE_CHECKING:  # numpy is only needed to make inputs, not to read graphs
    import numpy as np

PARAM_ATTR = "rlx.param"
NAME_ATTR = "rlx.name"
GRADIENT_SEED = "d_output"
"""The name of a gradient function's seed argument (RLX's `Input "d_output"`, which
`rlx-grad` adds): the cotangent of the loss; ones give the plain gradient."""


@dataclass(frozen=True)
class GraphArg:
    index: int
    name: str
    type: TensorType
    is_param: bool


def _arg_dict(f: func.FuncOp, index: int) -> dict[str, Attribute]:
    if f.arg_attrs is None:
        return {}
    entry = f.arg_attrs.data[index]
    assert isinstance(entry, DictionaryAttr)
    return dict(entry.data)


def argument_name(f: func.FuncOp, index: int) -> str:
    """Argument `index`'s `rlx.name`, else its positional name `argN` (any argument type)."""
    name = _arg_dict(f, index).get(NAME_ATTR)
    return name.data if isinstance(name, StringAttr) else f"arg{index}"


def is_param(f: func.FuncOp, index: int) -> bool:
    """Whether argument `index` is a parameter (`rlx.param`) rather than an input."""
    return PARAM_ATTR in _arg_dict(f, index)


def argument_names(f: func.FuncOp) -> list[str]:
    """The names of all of `f`'s arguments, by `argument_name`'s rule."""
    return [argument_name(f, index) for index in range(len(f.body.block.args))]


def graph_args(f: func.FuncOp) -> list[GraphArg]:
    """The function's arguments with their RLX names and roles (all must be tensors)."""
    result = []
    for i, arg in enumerate(f.body.block.args):
        assert isinstance(arg.type, TensorType), f"argument {i} is not a tensor"
        result.append(GraphArg(i, argument_name(f, i), arg.type, PARAM_ATTR in _arg_dict(f, i)))
    return result


def result_name(f: func.FuncOp, index: int) -> str | None:
    """Result `index`'s `rlx.name` (a result attribute, as `rlx-grad` sets), or None."""
    if f.res_attrs is None or index >= len(f.res_attrs.data):
        return None
    entry = f.res_attrs.data[index]
    name = entry.data.get(NAME_ATTR) if isinstance(entry, DictionaryAttr) else None
    return name.data if isinstance(name, StringAttr) else None


def set_result_names(f: func.FuncOp, names: Sequence[str | None]) -> None:
    """Give `f`'s results these `rlx.name`s (None: unnamed), replacing its result attributes."""
    if not any(names):
        f.res_attrs = None
        return
    f.res_attrs = ArrayAttr(
        [DictionaryAttr({NAME_ATTR: StringAttr(name)} if name else {}) for name in names]
    )


def output_names(f: func.FuncOp) -> list[str]:
    """The names of `f`'s outputs: each result's `rlx.name`, else `out<i>`."""
    ret = f.body.block.last_op
    n = len(ret.operands) if ret is not None else 0
    return [result_name(f, i) or f"out{i}" for i in range(n)]


def inputs_by_name(f: func.FuncOp, named: Mapping[str, object]) -> list:
    """`named` (argument name -> value) as a list in `f`'s argument order. An argument
    answers to its `rlx.name` (else `argN`) and to its SSA name (`x`); a missing or an
    unknown name is a `KeyError` that lists the argument names."""
    names = argument_names(f)
    index = {arg.name_hint: i for i, arg in enumerate(f.body.block.args) if arg.name_hint}
    index.update({name: i for i, name in enumerate(names)})
    values: dict[int, object] = {}
    for key, value in named.items():
        if key not in index:
            raise KeyError(f"@{f.sym_name.data} has no argument '{key}' (arguments: {', '.join(names)})")
        if index[key] in values:
            raise KeyError(f"argument '{names[index[key]]}' of @{f.sym_name.data} is given twice")
        values[index[key]] = value
    missing = [name for i, name in enumerate(names) if i not in values]
    if missing:
        raise KeyError(f"no value for argument{'s' if len(missing) > 1 else ''} {', '.join(missing)} of @{f.sym_name.data}")
    return [values[i] for i in range(len(names))]


def random_array(t: TensorType, rng: np.random.Generator, ids: int | None = None) -> np.ndarray:
    """A deterministic random tensor of type `t` (static shapes only).

    Values are drawn in the argument's own dtype (f32 as f32, halves through f32),
    so a large input needs no float64 copy: floats are standard normal, integers
    0..3 (or `0..ids-1` for ids: labels, indices), i1 coin flips.
    """
    import numpy as np

    shape = tuple(t.get_shape())
    if not is_static(shape):
        raise ValueError(f"cannot make a random input of dynamic type {t}")
    dt = dtypes.dtype_of(t.element_type)
    if dt.kind == "bool":
        return rng.integers(0, 2, size=shape, dtype=np.bool_)
    if dt.kind in ("int", "uint"):
        # Drawn as i64: numpy draws no ml_dtypes integers (i4, ui4, i2, ui2).
        return rng.integers(0, 4 if ids is None else ids, size=shape).astype(dt.numpy)
    if dt.kind == "complex":
        pairs = rng.standard_normal((*shape, 2), dtype=np.float32)
        return pairs.view(np.complex64).reshape(shape)
    drawn = rng.standard_normal(shape, dtype=np.float64 if dt.name == "f64" else np.float32)
    return drawn.astype(dt.numpy, copy=False)


def random_inputs(f: func.FuncOp, seed: int = 0) -> list[np.ndarray]:
    """Deterministic random values for every argument of `f`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    args = f.body.block.args
    return [random_array(a.type, rng, id_bound(args[a.index])) for a in graph_args(f)]


def id_bound(arg: SSAValue) -> int | None:
    """The fewest ids any op reading `arg` as indices selects from (`index_bound`), if any."""
    bounds = [use.operation.index_bound(arg) for use in arg.uses if hasattr(use.operation, "index_bound")]
    known = [b for b in bounds if b is not None]
    return min(known) if known else None


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called `name`, or the module's first function."""
    if name is None:
        first = next((op for op in module.ops if isinstance(op, func.FuncOp)), None)
        if first is None:
            raise KeyError("the module contains no func.func")
        return first
    found = SymbolTable.lookup_symbol(module, name)
    if not isinstance(found, func.FuncOp):
        raise KeyError(f"no function named '{name}'")
    return found
