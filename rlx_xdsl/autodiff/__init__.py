"""Reverse-mode autodiff: `rlx-grad`, its VJP registry and `rlx-prepare-ad`.

* `registry`: `VJP_RULES`, one rule per op class (the rule signature is documented there);
* `rules/mir/<group>.py`: MIR's rules, one module per op group;
* `emit`: what rules share (`unbroadcast`, zeros, scalars, reshapes);
* `grad`: the `rlx-grad` pass (`build_gradient`);
* `prepare`: the `rlx-prepare-ad` pass, a fixed list of steps (`PREPARE_STEPS`).
"""
