"""Command-line tools: rlx-opt and rlx-run."""
