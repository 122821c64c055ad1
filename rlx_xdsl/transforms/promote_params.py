"""`rlx-promote-params{names}`: the named parameters become inputs (RLX's
`promote_params_to_inputs`), e.g. to feed fine-tuned weights at run time.

A parameter is a function argument with `rlx.param`; promoting it drops the attribute
(its `rlx.name` stays). An empty `names` promotes every parameter. Unlike RLX, which
ignores unknown names, a name that is no parameter of any function is an error: a typo
would otherwise leave the weights baked in silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.ir.graph import PARAM_ATTR, argument_name, is_param
from rlx_xdsl.transforms.statistics import Statistic

PROMOTED = Statistic("num-promoted", "Number of parameters made inputs")


@dataclass(frozen=True)
class PromoteParamsPass(ModulePass):
    """Turn the named parameters (every one when `names` is empty) into inputs."""

    name = "rlx-promote-params"

    STATISTICS = (PROMOTED,)

    names: tuple[str, ...] = field(default=(), metadata={"syntax": "NAME,...", "example": "wq"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found: set[str] = set()
        for f in op.walk():
            if not isinstance(f, func.FuncOp) or f.arg_attrs is None:
                continue
            attrs = list(f.arg_attrs.data)
            for index in range(len(attrs)):
                name = argument_name(f, index)
                if is_param(f, index) and (not self.names or name in self.names):
                    found.add(name)
                    PROMOTED.add()
                    kept = {k: v for k, v in attrs[index].data.items() if k != PARAM_ATTR}
                    attrs[index] = DictionaryAttr(kept)
            f.arg_attrs = type(f.arg_attrs)(attrs)
        unknown = [n for n in self.names if n not in found]
        if unknown:
            raise PassFailedException(f"rlx-promote-params: names={','.join(unknown)} names no parameter")
