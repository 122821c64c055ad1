"""Batching (`rlx-vmap`): a function mapped over a leading batch axis, as an IR-to-IR rewrite.

* `registry`: `BATCH_RULES`, one batching rule per op class, and `NoBatchRule`;
* `emit`: the helpers rules share (rank padding, broadcasting an unbatched value,
  folding the batch into an op's own batch dim, the sequential scan);
* `vmap`: the `rlx-vmap` pass (`build_vmap`);
* `rules/mir/<group>.py`: the rules of each MIR group.
"""
