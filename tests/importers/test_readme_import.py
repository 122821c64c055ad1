"""The README's PyTorch import ("Import a PyTorch or ONNX model"), run as a user runs it: in a
fresh interpreter, with nothing prepared first (the test session's `conftest.py` is not
there), on a tiny random `transformers` LLaMA, which imports torchvision where installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import torch
    from rlx_xdsl.importers.torch import import_module          # pip install -e '.[torch]'
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         vocab_size=32, attn_implementation="sdpa")
    llama = LlamaForCausalLM(config).eval()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.llama = llama

        def forward(self, x):
            return self.llama(x, use_cache=False).logits

    model = Model()
    module = import_module(model, (torch.randint(0, 32, (2, 16)),), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    print(module)
    """
)


def test_a_transformers_model_imports_with_no_step_before_the_readmes():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mir.attention" in done.stdout and "tensor<?x16x32xf32>" in done.stdout
