"""MIR to LIR: `rlx-plan-memory` (`plan_memory`), its packing algorithm (`allocate`) and reports."""
