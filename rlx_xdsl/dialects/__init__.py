"""RLX dialects (HIR, MIR, LIR) and the traits and base class they share."""
