"""VJP rules, one package per dialect (`mir`), one module per op group."""
