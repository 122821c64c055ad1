"""JVP rules of the MIR ops, one module per MIR group (`layers.MIR_GROUPS`).

Each module registers its rules in `JVP_RULES` when imported; the passes that need the
rules load them (`layers.load("jvp")`). The coverage test checks that every op with a
VJP rule has a JVP rule.
"""
