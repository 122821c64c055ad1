"""VJP rules of the norm group."""
