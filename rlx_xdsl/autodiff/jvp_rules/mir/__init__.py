"""JVP rules of the MIR ops, one module per group of `rlx_xdsl.dialects.mir.GROUPS`.

Each module registers its rules in `JVP_RULES` when imported. This package
imports the module of every group that has one (a module named after the
group); `GROUPS` lists them in the dialect's order, so a group without a rules
module is visible (the coverage test checks that every op with a VJP rule has
a JVP rule).
"""

import importlib
import importlib.util

from rlx_xdsl.dialects.mir import GROUPS as _DIALECT_GROUPS


def _load(group_name: str):
    name = f"{__name__}.{group_name}"
    return importlib.import_module(name) if importlib.util.find_spec(name) is not None else None


GROUPS = tuple(
    module
    for module in (_load(group.__name__.rsplit(".", 1)[-1]) for group in _DIALECT_GROUPS)
    if module is not None
)
