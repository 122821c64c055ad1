"""Recipes of the MIR ops, one module per MIR group (`layers.MIR_GROUPS`).

Importing a module registers its recipes in `graphgen.RECIPES`; the generator loads
them (`layers.load("mir-graphgen")`).
"""
