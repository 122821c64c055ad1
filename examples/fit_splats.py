"""Fit a small scene of 3-D Gaussians to a target image with the gradient `rlx-grad` builds.

    python examples/fit_splats.py [--steps 40] [--lr 5] [--gaussians 24] [--size 24]

The graph (built with `GraphBuilder`) renders Gaussians with `mir.gaussian_splat_render`
from parameters in the 3DGS parameterisation (Kerbl et al. 2023): log-scales through `exp`,
opacity logits through `sigmoid`, raw quaternions, RGB offsets and band-0 SH coefficients,
and returns the mean squared error against a target image (and the image itself). `rlx-prepare-ad`, `rlx-grad`
and `rlx-dce` turn it into `@loss_grad` (the render's rule: one
`mir.gaussian_splat_render_backward`). The target is the render of a random scene; the fit
starts from a perturbed copy (means moved, colours and opacities reset) and takes plain
gradient steps, one run of `@loss_grad` on the reference interpreter each. It prints the
loss and the time per step.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline

PIPELINE = "rlx-prepare-ad,rlx-grad{func=loss},rlx-dce"
PARAMS = ("positions", "log_scales", "rotations", "opacity_logits", "colors", "sh")


def camera(size: int) -> np.ndarray:
    """`meta`: identity rotation, the scene 4 units ahead, a 50-degree field of view."""
    view = np.eye(4)
    view[2, 3] = 4.0
    focal = size / (2 * np.tan(np.radians(25)))
    return np.concatenate(
        [view.ravel(), [focal, focal, size / 2, size / 2, 0.01, 100.0]]
    ).astype(np.float32)


def build(n: int, size: int):
    """`@loss(target, meta, params...)`: `mean((render(params) - target)^2)` and the render."""
    b = GraphBuilder("loss")
    target = b.input("target", [size, size, 3])
    meta = b.input("meta", [22])
    shapes = ([n, 3], [n, 3], [n, 4], [n], [n, 3], [n, 1, 3])
    positions, log_scales, rotations, logits, colors, sh = (
        b.param(name, s) for name, s in zip(PARAMS, shapes)
    )
    image = b.mir.gaussian_splat_render(
        positions, b.exp(log_scales), rotations, b.sigmoid(logits), colors, sh, meta,
        width=size, height=size, tile_size=8,
    )  # fmt: skip
    error = b.sub(image, target)
    b.output(b.reduce(b.mul(error, error), kind="mean", axes=[0, 1, 2]), image)
    return b.module()


def random_scene(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    params = [
        rng.uniform([-1, -1, -0.5], [1, 1, 0.5], (n, 3)),
        np.log(rng.uniform(0.1, 0.3, (n, 3))),
        rng.standard_normal((n, 4)),
        rng.uniform(0.5, 2.0, n),
        rng.uniform(0, 1, (n, 3)),
        np.zeros((n, 1, 3)),
    ]
    return [p.astype(np.float32) for p in params]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--lr", type=float, default=5.0)
    parser.add_argument("--gaussians", type=int, default=24)
    parser.add_argument("--size", type=int, default=24)
    args = parser.parse_args(argv)

    module = build(args.gaussians, args.size)
    for pass_ in parse_pipeline(PIPELINE, get_all_passes()).passes:
        pass_.apply(Context(), module)

    rng = np.random.default_rng(0)
    meta = camera(args.size)
    truth = random_scene(rng, args.gaussians)
    blank = np.zeros((args.size, args.size, 3), np.float32)
    _, target = run_function(module, "loss", [blank, meta, *truth])
    params = [p.copy() for p in truth]
    params[0] = params[0] + rng.normal(0, 0.15, params[0].shape).astype(np.float32)
    params[3] = np.zeros_like(params[3])
    params[4] = np.full_like(params[4], 0.5)
    # per-parameter step sizes: pixels are small, so the means need a larger one
    rates = np.array([4.0, 1.0, 1.0, 4.0, 2.0, 2.0]) * args.lr
    one = np.array(1.0, np.float32)
    losses, start = [], time.perf_counter()
    for step in range(args.steps + 1):
        loss, _, *grads = run_function(
            module, "loss_grad", [target, meta, *params, one]
        )
        losses.append(float(loss))
        if step % 10 == 0 or step == args.steps:
            print(f"step {step:3d}  loss {losses[-1]:.5f}")
        params = [p - np.float32(r) * g for p, r, g in zip(params, rates, grads)]
    per_step = (time.perf_counter() - start) / (args.steps + 1)
    print(
        f"{args.gaussians} Gaussians, {args.size}x{args.size} image: {per_step * 1e3:.1f} ms per step"
    )
    print(
        f"loss decreased: {'yes' if losses[-1] < losses[0] else 'no'} (to {losses[-1] / losses[0]:.0%} of the first)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
