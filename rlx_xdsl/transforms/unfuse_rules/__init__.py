"""`rlx-unfuse` rules, one module per MIR group; `layers.load("unfuse")` imports them."""
