"""numpy kernels of the MIR ops, one module per MIR group (`layers.MIR_GROUPS`).

Each module holds a `KERNELS` table keyed by op class (see `interpreters.common.Kernel`);
the interpreter's engine loads them (`layers.load("mir-kernels")`).
"""
