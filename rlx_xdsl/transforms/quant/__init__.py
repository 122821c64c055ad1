"""Quantisation passes: `rlx-insert-qdq` (RLX's `insert_q_dq`) and `rlx-quant-propagate`
(RLX's `quant_propagate`, fixed); `docs/quantization.md`."""
