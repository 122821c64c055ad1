"""The `mir` dialect: RLX's tensor-op vocabulary.

Ops are grouped by concept, one module per group (`layers.MIR_GROUPS`, the one list
every layer reads). Each module exports `OPS` (and optionally `ATTRIBUTES`); this
package gathers them into the `MIR` dialect.
"""

from xdsl.ir import Dialect

from rlx_xdsl import layers
from rlx_xdsl.dialects.mir import attrs
from rlx_xdsl.dialects.mir.builders import MirNamespace
from rlx_xdsl.ir.emitter import register_namespace

GROUPS = layers.load("mir-dialect")
"""The group modules, in `layers.MIR_GROUPS` order."""

ALL_OPS = [op for group in GROUPS for op in group.OPS]
ALL_ATTRIBUTES = [*attrs.ATTRIBUTES] + [a for g in GROUPS for a in getattr(g, "ATTRIBUTES", [])]

MIR = Dialect("mir", ALL_OPS, ALL_ATTRIBUTES)
register_namespace("mir", lambda emitter: MirNamespace(emitter, MIR))
