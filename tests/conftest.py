"""Hypothesis profiles.

`ci` (the default) derandomizes every property test: each run checks the same examples, so
a red run is reproducible and a green one does not hide a failure that the next run might
draw. `explore` draws fresh examples, for hunting bugs locally:
`pytest --hypothesis-profile=explore tests/autodiff` (add `--hypothesis-seed=N` to replay one).
"""

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")
