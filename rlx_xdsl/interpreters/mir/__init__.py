"""numpy implementations of MIR ops, one module per dialect group."""
