"""JVP rules of the MIR ops, one module per group of `rlx_xdsl.dialects.mir.GROUPS`.

Each module registers its rules in `JVP_RULES` when imported; this package
imports them all (the coverage test checks that every op with a VJP rule has one).
"""

from rlx_xdsl.autodiff.jvp_rules.mir import (  # noqa: F401
    backward,
    moe,
    quant,
    random,
    signal,
    vision,
)
