"""VJP rules of the structured group."""
