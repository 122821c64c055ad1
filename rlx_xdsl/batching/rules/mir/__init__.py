"""Batching rules of the MIR ops, one module per MIR group (`layers.MIR_GROUPS`).

Each module registers its rules in `BATCH_RULES` when imported; `rlx-vmap` loads them
(`layers.load("batching")`).
"""
