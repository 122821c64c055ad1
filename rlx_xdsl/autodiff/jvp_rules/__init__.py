"""Forward-mode (JVP) rules, one package per dialect; see `rlx_xdsl.autodiff.jvp_registry`."""
