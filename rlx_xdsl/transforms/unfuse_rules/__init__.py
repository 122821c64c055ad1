"""`rlx-unfuse` rules, one module per MIR group; `unfuse.load_rules()` imports them."""
