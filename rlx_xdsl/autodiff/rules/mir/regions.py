"""VJP rules of the regions group."""
