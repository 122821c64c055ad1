"""Unfuse rules, one module per group of composite ops (imported by `unfuse.load_rules()`)."""
