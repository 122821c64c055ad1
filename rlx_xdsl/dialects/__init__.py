"""RLX dialects (HIR, MIR, LIR) and the traits and base class they share.

May import: `ir`, the root modules below the dialects, and xDSL.
"""

from rlx_xdsl.ir import sharding  # noqa: F401  (registers the verifier of rlx.mesh and rlx.sharding)
