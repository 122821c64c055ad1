"""JVP rules of the fused group: none, on purpose.

As in reverse mode, every fused op is the chain of primitives its `rlx-unfuse`
rule expands it into; `rlx-prepare-ad`'s unfuse step does that before `rlx-jvp`,
and the primitives' rules push the tangents forward.
"""
