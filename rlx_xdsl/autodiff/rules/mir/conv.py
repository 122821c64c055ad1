"""VJP rules of the conv group."""
