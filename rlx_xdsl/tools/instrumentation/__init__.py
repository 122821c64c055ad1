"""`rlx-opt`'s pipeline debugging aids, as `PassInstrumentation`s (`transforms/instrument.py`):
IR printing, timing, statistics and crash reproducers, with `mlir-opt`'s flags and output."""
