"""VJP rules of the attention group."""
