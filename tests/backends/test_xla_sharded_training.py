"""Sharded training steps over 8 host devices (issue 38): data-parallel, FSDP (ZeRO-3:
`rlx-shard-params` + `rlx-train-step`) and 2-D (`{data = 4, model = 2}`, Megatron + FSDP)
AdamW steps of the LLaMA training graph each equal the single-device step over 3 steps, the
updated parameters and state come back in their input shardings, and the compiled program's
memory analysis holds 1/N of each sharded argument per device. The runs happen in one
subprocess (`sharded_training_run.py`) with its own `XLA_FLAGS`: this session's JAX has 4
devices (`tests/conftest.py`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

RTOL = 1e-5


@pytest.fixture(scope="module")
def report():
    count = "--xla_force_host_platform_device_count=8"
    flags = re.sub(r"--xla_force_host_platform_device_count=\d+", "", os.environ.get("XLA_FLAGS", "")) + " " + count
    script = Path(__file__).with_name("sharded_training_run.py")
    done = subprocess.run(
        [sys.executable, str(script)],
        env=os.environ | {"XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_run_had_eight_devices(report):
    assert report["devices"] == 8


@pytest.mark.parametrize("layout", ["dp", "fsdp", "2d"])
def test_three_sharded_steps_equal_the_single_device_steps(report, layout):
    want, got = report["single"], report[layout]
    assert want["losses"][2] < want["losses"][0], "the steps must train for the comparison to mean something"
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=RTOL)
    assert len(got["results"]) == len(want["results"])
    for g, w in zip(got["results"], want["results"], strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert np.abs(g - w).max() <= RTOL * np.abs(w).max()


@pytest.mark.parametrize("layout", ["dp", "fsdp", "2d"])
def test_updated_parameters_and_state_stay_in_their_shardings(report, layout):
    """A training loop feeds the results back without moving them."""
    assert report[layout]["resident"]


def test_fsdp_shards_every_parameter_and_its_state_and_xla_gathers_them(report):
    fsdp = report["fsdp"]
    split = {name: n for name, n in fsdp["parts"].items() if name not in ("cos", "sin", "step")}
    assert set(split.values()) == {8}  # x, every parameter, every m_ and v_
    assert "all-gather" in fsdp["collectives"]
    assert "all-reduce" in report["dp"]["collectives"]


def test_2d_splits_megatron_weights_over_both_axes(report):
    parts = report["2d"]["parts"]
    assert parts["layers.0.wq"] == parts["m_layers.0.w_down"] == 8  # model (Megatron) x data (FSDP)
    assert parts["x"] == parts["lm_head"] == 4  # data only


@pytest.mark.parametrize("layout", ["single", "dp", "fsdp", "2d"])
def test_per_device_argument_memory_is_each_argument_over_its_devices(report, layout):
    """XLA's memory analysis of the compiled program (per device) against the bytes of each
    argument divided by the number of devices it is split over."""
    assert report[layout]["argument_bytes"] == report[layout]["expected_argument_bytes"]
    if layout == "fsdp":  # all but cos, sin and step split 8 ways
        assert report["fsdp"]["argument_bytes"] < report["single"]["argument_bytes"] / 7
