"""VJP rules of the MIR ops, one module per MIR group (`layers.MIR_GROUPS`).

Each module registers its rules in `VJP_RULES` when imported; the passes that need the
rules load them (`layers.load("vjp")`). A module may list in `PENDING` the ops of its
group that cannot be differentiated yet.
"""

from rlx_xdsl import layers


def pending() -> dict:
    """MIR ops with neither a VJP rule nor an `rlx-prepare-ad` rewrite yet, and the issue
    that adds one (every group module's `PENDING`)."""
    return {op: why for group in layers.load("vjp") for op, why in getattr(group, "PENDING", {}).items()}
