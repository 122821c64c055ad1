"""Random inputs draw ids in range: class labels below the class count, gather indices below
the table's size along its axis, expert ids below the expert count (`index_bound`)."""

from pathlib import Path

import numpy as np

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.ir.graph import random_inputs

ROOT = Path(__file__).resolve().parent.parent


def test_the_training_example_draws_labels_of_its_three_classes():
    module = parse_module((ROOT / "examples" / "train_mlp.mlir").read_text())
    labels = random_inputs(module.ops.first)[1]
    assert labels.shape == (8,) and labels.min() >= 0 and labels.max() < 3
    assert len(np.unique(labels)) > 1


def test_gather_indices_and_expert_ids_stay_below_their_dims():
    b = GraphBuilder("f")
    table = b.input("table", [5, 3, 2])
    indices = b.input("indices", [64], "i64")
    x, w, expert = b.input("x", [64, 3]), b.input("w", [2, 3, 4]), b.input("expert", [64], "i64")
    b.output(b.gather(table, indices, axis=0), b.grouped_matmul(x, w, expert))
    inputs = random_inputs(b.module().ops.first)
    assert inputs[1].max() < 5 and inputs[4].max() < 2
    free = GraphBuilder("g")
    free.output(free.input("n", [256], "i64"))
    assert random_inputs(free.module().ops.first)[0].max() == 3  # no reader: 0..3 as before
