"""JVP rules of the MIR ops, one module per group of `rlx_xdsl.dialects.mir.GROUPS`.

Each module registers its rules in `JVP_RULES` when imported; this package
imports them all (the coverage test checks that every op with a VJP rule has one).
"""
